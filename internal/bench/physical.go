package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the driver carryon's SQLite store uses
)

// PhysicalResult is the physical limit of a durable write on a database: n bare single-row
// INSERTs, one writer, each its own committed (fsync'd) transaction.
type PhysicalResult struct {
	Method       string  `json:"method"`
	Ops          int     `json:"ops"`
	Seconds      float64 `json:"seconds"`
	OpsPerSecond float64 `json:"ops_per_second"`
	Latency      Latency `json:"latency_ms"`
}

// physicalRun collects the inserts of one or more calls of run.
type physicalRun struct {
	method  string
	ds      []time.Duration
	elapsed time.Duration
}

// run measures n inserts where dsn is: a PostgreSQL URL (a table of its own in that database,
// dropped afterwards; synchronous_commit as the server has it) or a SQLite file path, which it
// leaves alone: the inserts go to a file of their own beside it (same directory, so the same
// file system and disk), opened as carryon opens its own (WAL, the synchronous level given:
// FULL fsyncs every commit), and removed afterwards.
func (r *physicalRun) run(ctx context.Context, dsn, synchronous string, n int) error {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return r.postgres(ctx, dsn, n)
	}
	return r.sqlite(ctx, strings.TrimPrefix(dsn, "sqlite://"), synchronous, n)
}

func (r *physicalRun) result() *PhysicalResult {
	res := &PhysicalResult{Method: r.method, Ops: len(r.ds), Seconds: r.elapsed.Seconds(), Latency: latencyOf(r.ds)}
	if r.elapsed > 0 {
		res.OpsPerSecond = math.Round(float64(len(r.ds))/r.elapsed.Seconds()*10) / 10
	}
	return res
}

// body is a row as long as a turn's message.
const body = "turn 1: please continue the investigation where we stopped"

func (r *physicalRun) sqlite(ctx context.Context, path, synchronous string, n int) error {
	if synchronous == "" {
		synchronous = "FULL"
	}
	file := filepath.Join(filepath.Dir(path), fmt.Sprintf("bench-physical-%d.db", rand.Uint32()))
	defer func() {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(file + suffix)
		}
	}()
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+strings.ToUpper(synchronous)+")")
	q.Add("_pragma", "busy_timeout(10000)")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: file}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE physical (id INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("physical limit: %w", err)
	}
	r.method = fmt.Sprintf("SQLite single-row INSERT, WAL, synchronous=%s, a file beside the database", strings.ToUpper(synchronous))
	return r.time(ctx, n, func() error {
		_, err := db.ExecContext(ctx, `INSERT INTO physical (body, created_at) VALUES (?, ?)`, body, time.Now().UnixMilli())
		return err
	})
}

func (r *physicalRun) postgres(ctx context.Context, dsn string, n int) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("physical limit: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	table := fmt.Sprintf("carryon_bench_physical_%d", rand.Uint32())
	if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL)`); err != nil {
		return fmt.Errorf("physical limit: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP TABLE `+table)
	var commit string
	if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&commit); err != nil {
		return fmt.Errorf("physical limit: %w", err)
	}
	r.method = "PostgreSQL single-row INSERT, synchronous_commit=" + commit + ", a table of its own in the database"
	return r.time(ctx, n, func() error {
		_, err := conn.Exec(ctx, `INSERT INTO `+table+` (body, created_at) VALUES ($1, now())`, body)
		return err
	})
}

// time runs insert n times, one after the other, and times each.
func (r *physicalRun) time(ctx context.Context, n int, insert func() error) error {
	start := time.Now()
	defer func() { r.elapsed += time.Since(start) }()
	for range n {
		if ctx.Err() != nil {
			return nil
		}
		t0 := time.Now()
		if err := insert(); err != nil {
			return fmt.Errorf("physical limit: %w", err)
		}
		r.ds = append(r.ds, time.Since(t0))
	}
	return nil
}
