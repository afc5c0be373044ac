package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon/internal/store"
)

// SessionsOverLimit numbers each owner's sessions from the most recently active one and returns
// those past max, least recently active first. It reads every session row (a window over the
// table): the sweeper runs it once a sweep.
func (t *Tx) SessionsOverLimit(ctx context.Context, max, limit int) ([]store.SessionRef, error) {
	return scanAll(t, ctx, "sessions over the limit", func(r Row) (store.SessionRef, error) {
		var ref store.SessionRef
		err := r.Scan(&ref.OwnerID, &ref.ID)
		return ref, err
	}, `SELECT owner_id, id FROM (SELECT owner_id, id, last_active_at,
		row_number() OVER (PARTITION BY owner_id ORDER BY last_active_at DESC, id DESC) AS n FROM sessions) AS r
		WHERE n > ? ORDER BY last_active_at, id`+limitArg, max, Limit(limit))
}

// ExistingSessions returns which of ids name a stored session (SessionOwners' query).
func (t *Tx) ExistingSessions(ctx context.Context, ids []string) (map[string]bool, error) {
	owners, err := t.SessionOwners(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(owners))
	for id := range owners {
		out[id] = true
	}
	return out, nil
}

// CountSessions returns how many sessions the owner has.
func (t *Tx) CountSessions(ctx context.Context, owner string) (int64, error) {
	var n int64
	err := t.Conn.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE owner_id = ?`, owner).Scan(&n)
	return n, t.Wrap(err, "count sessions")
}

// CountRows returns the number of rows of a table named by the database's catalog (quoted as an
// identifier here), for the drivers' TableStats.
func (t *Tx) CountRows(ctx context.Context, table string) (int64, error) {
	var n int64
	err := t.Conn.QueryRow(ctx, `SELECT count(*) FROM `+QuoteEach([]string{table}, `"`)[0]).Scan(&n)
	return n, t.Wrap(err, "count rows of "+table)
}

// UserStats counts each user's rows with one subquery per kind, through the indexes by owner and
// session, and sums the octet length of their stored text.
func (t *Tx) UserStats(ctx context.Context) ([]store.UserStat, error) {
	const own = `JOIN sessions s ON s.id = x.session_id WHERE s.owner_id = u.id`
	const keyOwn = `JOIN sessions s ON s.session_key = x.session_key WHERE s.owner_id = u.id`
	const runOwn = `JOIN runs r ON r.id = x.run_id WHERE r.owner_id = u.id`
	return scanAll(t, ctx, "user stats", func(r Row) (store.UserStat, error) {
		var u store.UserStat
		var bytes [5]int64
		err := r.Scan(&u.UserID, &u.Name, &u.Sessions, &u.Messages, &u.Runs, &u.Actions, &u.Events, &u.LongTermItems,
			&u.RequestIDs, &bytes[0], &bytes[1], &bytes[2], &bytes[3], &bytes[4])
		for _, b := range bytes {
			u.Bytes += b
		}
		return u, err
	}, `SELECT u.id, u.name,
		(SELECT count(*) FROM sessions s WHERE s.owner_id = u.id),
		(SELECT count(*) FROM messages x `+keyOwn+`),
		(SELECT count(*) FROM runs r WHERE r.owner_id = u.id),
		(SELECT count(*) FROM actions x `+own+`),
		(SELECT count(*) FROM run_events x `+runOwn+`),
		(SELECT count(*) FROM memories m WHERE m.owner_id = u.id),
		(SELECT count(*) FROM idempotency i WHERE i.owner_id = u.id),
		(SELECT coalesce(sum(octet_length(x.content) + coalesce(octet_length(x.tool_calls), 0)
			+ coalesce(octet_length(x.metadata), 0)), 0) FROM messages x `+keyOwn+`),
		(SELECT coalesce(sum(octet_length(x.document) + coalesce(octet_length(x.patch), 0)), 0) FROM memory_revisions x `+keyOwn+`),
		(SELECT coalesce(sum(coalesce(octet_length(x.args), 0) + octet_length(x.result)), 0) FROM actions x `+own+`),
		(SELECT coalesce(sum(coalesce(octet_length(x.data), 0)), 0) FROM run_events x `+runOwn+`),
		(SELECT coalesce(sum(octet_length(m.value) + octet_length(m.text)), 0) FROM memories m WHERE m.owner_id = u.id)
		FROM users u WHERE u.forgetting_at IS NULL ORDER BY u.name`)
}
