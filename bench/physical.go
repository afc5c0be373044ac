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

// Physical measures the physical limit of a durable write where dsn is: a PostgreSQL URL (a
// table of its own in that database, dropped afterwards; synchronous_commit as the server has
// it) or a SQLite file path, which it leaves alone: the inserts go to a file of their own beside
// it (same directory, so the same file system and disk), opened as carryon opens its own (WAL,
// the synchronous level given: FULL fsyncs every commit), and removed afterwards.
func Physical(ctx context.Context, dsn, synchronous string, n int) (*PhysicalResult, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return physicalPostgres(ctx, dsn, n)
	}
	return physicalSQLite(ctx, strings.TrimPrefix(dsn, "sqlite://"), synchronous, n)
}

// body is a row as long as a turn's message.
const body = "turn 1: please continue the investigation where we stopped"

func physicalSQLite(ctx context.Context, path, synchronous string, n int) (*PhysicalResult, error) {
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
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE physical (id INTEGER PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)`); err != nil {
		return nil, fmt.Errorf("physical limit: %w", err)
	}
	res, err := timeInserts(ctx, n, func(i int) error {
		_, err := db.ExecContext(ctx, `INSERT INTO physical (body, created_at) VALUES (?, ?)`, body, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Method = fmt.Sprintf("SQLite single-row INSERT, WAL, synchronous=%s, a file beside the database", strings.ToUpper(synchronous))
	return res, nil
}

func physicalPostgres(ctx context.Context, dsn string, n int) (*PhysicalResult, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("physical limit: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	table := fmt.Sprintf("carryon_bench_physical_%d", rand.Uint32())
	if _, err := conn.Exec(ctx, `CREATE TABLE `+table+` (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL)`); err != nil {
		return nil, fmt.Errorf("physical limit: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP TABLE `+table)
	var commit string
	if err := conn.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&commit); err != nil {
		return nil, fmt.Errorf("physical limit: %w", err)
	}
	res, err := timeInserts(ctx, n, func(int) error {
		_, err := conn.Exec(ctx, `INSERT INTO `+table+` (body, created_at) VALUES ($1, now())`, body)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Method = "PostgreSQL single-row INSERT, synchronous_commit=" + commit + ", a table of its own in the database"
	return res, nil
}

// timeInserts runs insert n times, one after the other, and times each.
func timeInserts(ctx context.Context, n int, insert func(i int) error) (*PhysicalResult, error) {
	ds := make([]time.Duration, 0, n)
	start := time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		t0 := time.Now()
		if err := insert(i); err != nil {
			return nil, fmt.Errorf("physical limit: %w", err)
		}
		ds = append(ds, time.Since(t0))
	}
	elapsed := time.Since(start)
	res := &PhysicalResult{Ops: len(ds), Seconds: elapsed.Seconds(), Latency: latencyOf(ds)}
	if elapsed > 0 {
		res.OpsPerSecond = math.Round(float64(len(ds))/elapsed.Seconds()*10) / 10
	}
	return res, nil
}
