package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPragmas checks that every pooled connection carries the settings the driver promises.
func TestPragmas(t *testing.T) {
	for _, c := range []struct {
		name, dsn, journal string
		opts               []Option
		sync               int
		walSync            bool // FULL's fsync done by carryon after COMMIT (walsync.go)
	}{
		// FULL: the connections run at NORMAL and each commit is fsynced after it, by ws.
		{name: "file", dsn: filepath.Join(t.TempDir(), "a.db"), journal: "wal", sync: 1, walSync: true},
		{name: "uri", dsn: "file:" + filepath.Join(t.TempDir(), "u.db"), journal: "wal", sync: 2},
		{name: "normal", dsn: filepath.Join(t.TempDir(), "b.db"), journal: "wal", sync: 1, opts: []Option{WithSynchronous("normal")}},
		{name: "memory", dsn: ":memory:", journal: "memory", sync: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := Open(t.Context(), c.dsn, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if (db.ws != nil) != c.walSync {
				t.Fatalf("commits fsynced by carryon: %v, want %v", db.ws != nil, c.walSync)
			}
			// Hold several connections at once so that more than one is opened and checked.
			n := 3
			if db.inMemory {
				n = 1
			}
			for i := range n {
				conn, err := db.sql.Conn(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var journal string
				var fk, sync, busy, limit int
				for q, dst := range map[string]any{
					"PRAGMA journal_mode": &journal, "PRAGMA foreign_keys": &fk,
					"PRAGMA synchronous": &sync, "PRAGMA busy_timeout": &busy,
					"PRAGMA journal_size_limit": &limit,
				} {
					if err := conn.QueryRowContext(t.Context(), q).Scan(dst); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				if strings.ToLower(journal) != c.journal || fk != 1 || sync != c.sync || busy != 10000 {
					t.Fatalf("conn %d: journal_mode=%s foreign_keys=%d synchronous=%d busy_timeout=%d", i, journal, fk, sync, busy)
				}
				if !db.inMemory && limit != journalSizeLimit {
					t.Fatalf("conn %d: journal_size_limit=%d, want %d", i, limit, journalSizeLimit)
				}
			}
		})
	}
}
