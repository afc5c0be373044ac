package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// TestCopyRefusesUnstorableRowsBeforeWriting: a SQLite database holding text PostgreSQL cannot
// store (NUL characters, put there with raw SQL as an older carryon let them in) is refused
// before anything is written, with every bad row named by table, key and column; the
// destination stays empty, and a copy after the rows are corrected succeeds.
func TestCopyRefusesUnstorableRowsBeforeWriting(t *testing.T) {
	t.Parallel()
	dsn := pgDatabase(t)
	data := t.TempDir()
	path := filepath.Join(data, "carryon.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := &carryon.User{ID: "usr_nul", Name: "nul"}
	alice := carryon.NewContextWithUser(ctx, u)
	svc := sessions.New(db, sessions.Config{})
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	s, err := svc.Create(alice, carryon.NewSession{Title: "clean"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendMessages(alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{
		{Role: carryon.RoleUser, Content: "one"}, {Role: carryon.RoleUser, Content: "two"}, {Role: carryon.RoleUser, Content: "three"}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	raw, err := openSQLiteReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE sessions SET title = ? WHERE id = ?`, []any{"ti\x00tle", s.ID}},
		{`UPDATE messages SET content = ? WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?) AND seq IN (1, 3)`, []any{"a\x00b", s.ID}},
	} {
		if _, err := raw.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	var stdout, stderr bytes.Buffer
	args := []string{"copy", "--from", path, "--to", dsn, "--progress", "none"}
	err = run(ctx, args, envMap(nil), nil, &stdout, &stderr)
	if err == nil {
		t.Fatalf("copy of unstorable rows succeeded:\n%s", stdout.String())
	}
	for _, want := range []string{
		"3 value(s) in the SQLite database cannot be stored in PostgreSQL; nothing was copied",
		`sessions (id="` + s.ID + `"), column title: text that PostgreSQL cannot store`,
		`messages (session_key=1, seq=1), column content`,
		`messages (session_key=1, seq=3), column content`,
		"NUL",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "seq=2") {
		t.Errorf("the refusal names a good row:\n%v", err)
	}
	if rows := pgRows(t, dsn); rows != 0 {
		t.Fatalf("the refused copy left %d rows in PostgreSQL", rows)
	}

	if _, err := raw.Exec(`UPDATE sessions SET title = 'fixed'`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE messages SET content = 'fixed' WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?) AND seq IN (1, 3)`, s.ID); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run(ctx, args, envMap(nil), nil, &stdout, &stderr); err != nil {
		t.Fatalf("copy after the fix: %v\n%s", err, stderr.String())
	}
	if rows := pgRows(t, dsn); rows == 0 {
		t.Fatal("the copy after the fix wrote nothing")
	}
}

// pgRows counts the rows of every table of the PostgreSQL database but schema_migrations.
func pgRows(t *testing.T, dsn string) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(names) == 0 {
		t.Fatalf("tables: %v %v", names, err)
	}
	var total int64
	for _, n := range names {
		var c int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{n}.Sanitize()).Scan(&c); err != nil {
			t.Fatal(err)
		}
		total += c
	}
	return total
}

// openSQLiteReader opens a SQLite file with database/sql, for the raw writes of a test, waiting
// on locks held by a running server instead of failing at once.
func openSQLiteReader(path string) (*sql.DB, error) {
	return sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
}
