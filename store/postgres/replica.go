package postgres

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultReadMaxLag is the staleness bound of a read replica unless WithReadReplica says
// otherwise.
const DefaultReadMaxLag = 5 * time.Second

// replicaConnectTimeout is how long making a connection to the replica may take unless its dsn
// sets connect_timeout: a replica that does not answer costs a marked read this long, once a
// replicaHoldOff, before the primary answers it.
const replicaConnectTimeout = time.Second

// replicaHoldOff is how long the replica is skipped after it could not serve a read (unreachable,
// failing, not a standby, or behind its bound): the primary answers the marked reads meanwhile.
const replicaHoldOff = time.Second

// replicaTxTimeout bounds a read on the replica; a replica slower than this (a stalled network)
// gives the read to the primary.
const replicaTxTimeout = 5 * time.Second

// lagQuery is the first statement of a read on the replica, so that the snapshot the read sees is
// the one measured: whether the server is a standby, and how far its replay is behind now in
// seconds (NULL when it has replayed nothing since it started). The commit time of the last
// transaction replayed is the measure: on a primary that writes nothing it grows although the
// standby misses nothing, and the primary then answers the marked reads too, which is safe.
const lagQuery = "SELECT pg_is_in_recovery(), EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8"

// WithReadReplica gives the DB a read pool on dsn, a streaming standby of the primary: Reads whose
// context is marked store.WithStaleRead are served by it while its replay is at most maxLag
// behind (0: DefaultReadMaxLag), and by the primary otherwise. Nothing else ever reads from it;
// Open does not migrate it or need it to be up.
func WithReadReplica(dsn string, maxLag time.Duration) Option {
	return func(c *config) { c.readDSN, c.readMaxLag = dsn, maxLag }
}

// replica is a DB's read pool on a standby and the state of its staleness checks.
type replica struct {
	pool   *pgxpool.Pool
	maxLag time.Duration
	// skipUntil is the unix time in nanoseconds before which the replica is not asked.
	skipUntil atomic.Int64
}

// openReplica makes the read pool of dsn (it connects lazily).
func openReplica(ctx context.Context, dsn string, maxLag time.Duration, maxConns int32) (*replica, error) {
	if maxLag < 0 {
		return nil, fmt.Errorf("postgres: negative read replica lag bound %s", maxLag)
	}
	if maxLag == 0 {
		maxLag = DefaultReadMaxLag
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse read replica dsn: %w", err)
	}
	if maxConns > 0 {
		pcfg.MaxConns = maxConns
	}
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = replicaConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open read replica: %w", err)
	}
	return &replica{pool: pool, maxLag: maxLag}, nil
}

// skip keeps the marked reads off the replica for replicaHoldOff.
func (r *replica) skip() { r.skipUntil.Store(time.Now().Add(replicaHoldOff).UnixNano()) }

// read runs fn in a REPEATABLE READ READ ONLY transaction on the replica when the replica is a
// standby within its bound, and reports whether it did. When it did not (skipped, unreachable,
// not a standby, behind, failing, or fn found nothing there), fn's effects must be thrown away
// and the caller reads on the primary.
func (r *replica) read(ctx context.Context, fn func(store.Tx) error) (served bool, err error) {
	if time.Now().UnixNano() < r.skipUntil.Load() {
		return false, nil
	}
	if ctx.Err() != nil {
		return false, nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, replicaTxTimeout)
	defer cancel()
	ptx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		if parent.Err() == nil {
			r.skip()
		}
		return false, nil
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	var standby bool
	var lag *float64
	if err := ptx.QueryRow(ctx, lagQuery).Scan(&standby, &lag); err != nil || !standby || lag == nil ||
		math.IsNaN(*lag) || *lag > r.maxLag.Seconds() {
		r.skip()
		return false, nil
	}
	if err := fn(newTx(ptx, true)); err != nil {
		switch carryon.ErrorCode(err) {
		case carryon.ENOTFOUND:
			return false, nil // perhaps not replayed yet: the primary knows
		case carryon.EINTERNAL, carryon.EUNAVAILABLE:
			r.skip() // the replica failed (a lost connection, a conflict with its recovery)
			return false, nil
		}
		return true, err // the request's own error, which the primary would answer too
	}
	if err := ptx.Commit(ctx); err != nil {
		r.skip()
		return false, nil
	}
	return true, nil
}
