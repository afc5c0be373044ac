package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/bench"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// BenchmarkCopySQLiteToPostgres times carryon copy of a SQLite store of 200 sessions of 500
// messages each (100,000 messages) into an empty PostgreSQL database, and reports the CPU this
// process spent on it an operation (cpu-ms/op; PostgreSQL's own is not in it).
func BenchmarkCopySQLiteToPostgres(b *testing.B) {
	pgtest.ServerURL(b)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "carryon.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	u := &carryon.User{ID: "usr_b", Name: "b"}
	owner := carryon.NewContextWithUser(ctx, u)
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, u) }); err != nil {
		b.Fatal(err)
	}
	svc := sessions.New(db, sessions.Config{})
	for i := range 200 {
		s, err := svc.Create(owner, carryon.NewSession{Title: fmt.Sprint("s", i)})
		if err != nil {
			b.Fatal(err)
		}
		for j := range 5 {
			msgs := make([]carryon.NewMessage, 100)
			for k := range msgs {
				msgs[k] = carryon.NewMessage{Role: carryon.RoleUser, Content: fmt.Sprintf("message %d of batch %d in session %d with some words", k, j, i)}
			}
			if _, err := svc.AppendMessages(owner, s.ID, carryon.AppendInput{Messages: msgs}); err != nil {
				b.Fatal(err)
			}
		}
	}
	db.Close()
	var cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		dsn := pgtest.NewDatabase(b)
		before, err := bench.SelfCPU(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var stdout, stderr bytes.Buffer
		if err := run(ctx, []string{"copy", "--from", path, "--to", dsn, "--progress", "none"}, envMap(nil), nil, &stdout, &stderr); err != nil {
			b.Fatalf("%v %s", err, stderr.String())
		}
		b.StopTimer()
		after, _ := bench.SelfCPU(ctx)
		cpu += after - before
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}
