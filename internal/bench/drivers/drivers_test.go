package drivers

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // "sqlite3": C SQLite through cgo
	_ "modernc.org/sqlite"          // "sqlite": SQLite transpiled to Go
)

// engines are the database/sql driver names compared.
var engines = []string{"sqlite", "sqlite3"}

// schema is a session row and a message table shaped like carryon's (keyed by session and seq).
var schema = []string{
	`PRAGMA journal_mode=WAL`,
	`PRAGMA synchronous=OFF`, // the CPU alone: the disk is the same for both engines
	`CREATE TABLE m (k INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT, kind TEXT, content TEXT, name TEXT,
		calls TEXT, tcid TEXT, cf INTEGER, ct INTEGER, tokens INTEGER, meta TEXT, version INTEGER, created INTEGER,
		PRIMARY KEY (k, seq)) WITHOUT ROWID`,
	`CREATE TABLE s (id TEXT PRIMARY KEY, owner TEXT, title TEXT, version INTEGER, last INTEGER, n INTEGER,
		meta TEXT, created INTEGER, updated INTEGER)`,
	`INSERT INTO s VALUES ('sess_abcdefghijklmnopqrstuvwxyz', 'usr_abcdefghijklmnopqrstuvwxyz', 'title', 1, 0, 0, NULL, 1, 1)`,
}

func open(b *testing.B, engine string) *sql.DB {
	db, err := sql.Open(engine, filepath.Join(b.TempDir(), "d.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range schema {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// write runs turn i's write transaction: read the session row, insert two messages, update the
// row at its next version.
func write(db *sql.DB, get, ins, upd *sql.Stmt, i int) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id, owner, title string
	var v, last, n, created, updated int64
	var meta *string
	if err := tx.Stmt(get).QueryRow("sess_abcdefghijklmnopqrstuvwxyz", "usr_abcdefghijklmnopqrstuvwxyz").
		Scan(&id, &owner, &title, &v, &last, &n, &meta, &created, &updated); err != nil {
		return err
	}
	for j := range 2 {
		if _, err := tx.Stmt(ins).Exec(1, 2*i+j, fmt.Sprintf("turn %d: please continue the investigation where we stopped", i), v+1, int64(i)); err != nil {
			return err
		}
	}
	if _, err := tx.Stmt(upd).Exec(v+1, 2*i+1, n+2, int64(i), id, owner, v); err != nil {
		return err
	}
	return tx.Commit()
}

func prepare(b *testing.B, db *sql.DB, q string) *sql.Stmt {
	st, err := db.Prepare(q)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// turnStatements prepares the statements of a turn's write: the session read, the insert of a
// message, the update of the session.
func turnStatements(b *testing.B, db *sql.DB) (get, ins, upd *sql.Stmt) {
	return prepare(b, db, `SELECT id, owner, title, version, last, n, meta, created, updated FROM s WHERE id = ? AND owner = ?`),
		prepare(b, db, `INSERT INTO m VALUES (?, ?, 'user', '', ?, '', NULL, '', 0, 0, 12, NULL, ?, ?)`),
		prepare(b, db, `UPDATE s SET version = ?, last = ?, n = ?, updated = ? WHERE id = ? AND owner = ? AND version = ?`)
}

// BenchmarkWriteTurn is one turn's write transaction (four statements, prepared).
func BenchmarkWriteTurn(b *testing.B) {
	for _, engine := range engines {
		b.Run(engine, func(b *testing.B) {
			db := open(b, engine)
			get, ins, upd := turnStatements(b, db)
			b.ResetTimer()
			for i := range b.N {
				if err := write(db, get, ins, upd, i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadTail reads the last 20 messages (13 columns each) of a session of 2,000, as a
// restore does.
func BenchmarkReadTail(b *testing.B) {
	for _, engine := range engines {
		b.Run(engine, func(b *testing.B) {
			db := open(b, engine)
			get, ins, upd := turnStatements(b, db)
			for i := range 1000 {
				if err := write(db, get, ins, upd, i); err != nil {
					b.Fatal(err)
				}
			}
			tail := prepare(b, db, `SELECT seq, role, kind, content, name, calls, tcid, cf, ct, tokens, meta, version, created
				FROM m WHERE k = 1 ORDER BY seq DESC LIMIT CAST(? AS BIGINT)`)
			b.ResetTimer()
			for range b.N {
				rows, err := tail.Query(20)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for rows.Next() {
					var seq, cf, ct, tokens, version, created int64
					var role, kind, content, name, tcid string
					var calls, meta *string
					if err := rows.Scan(&seq, &role, &kind, &content, &name, &calls, &tcid, &cf, &ct, &tokens, &meta, &version, &created); err != nil {
						b.Fatal(err)
					}
					n++
				}
				if err := rows.Close(); err != nil || n != 20 {
					b.Fatalf("%d rows, %v", n, err)
				}
			}
		})
	}
}
