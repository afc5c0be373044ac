package pgtest_test

import (
	"os"
	"testing"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestSchemasAreSeparate: each NewSchema URL puts its connections in a schema of their own, where
// unqualified names are created and looked up, so two tests never see each other's tables.
func TestSchemasAreSeparate(t *testing.T) {
	a, b := pgtest.NewSchema(t), pgtest.NewSchema(t)
	connect := func(dsn string) *pgx.Conn {
		c, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(t.Context()) })
		return c
	}
	ca, cb := connect(a), connect(b)
	var sa, sb string
	if err := ca.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&sa); err != nil {
		t.Fatal(err)
	}
	if err := cb.QueryRow(t.Context(), `SELECT current_schema()`).Scan(&sb); err != nil {
		t.Fatal(err)
	}
	if sa == sb || sa == "public" || sb == "public" {
		t.Fatalf("current schemas %q and %q, want two new ones", sa, sb)
	}
	if _, err := ca.Exec(t.Context(), `CREATE TABLE t (x INT)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 't'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second schema sees %d tables t (%v), want 0", n, err)
	}
	if _, err := cb.Exec(t.Context(), `CREATE TABLE t (x INT)`); err != nil {
		t.Fatalf("the second schema cannot create its own t: %v", err)
	}
}
