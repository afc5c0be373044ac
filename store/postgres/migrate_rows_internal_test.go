package postgres

import (
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/store/storetest"
	"github.com/jackc/pgx/v5"
)

// A schema written before migration 0017 (messages, revisions and fork chains naming their
// session by id, messages holding their run and request ids in every row) reads back the same
// after it (storetest.CheckOldRows).
func TestMigrateCompactRows(t *testing.T) {
	ctx := t.Context()
	dsn := pgtest.NewSchema(t)
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := ms[:0:0]
	for _, m := range ms {
		if m.Version < 17 {
			before = append(before, m)
		}
	}
	pc, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	err = pgx.BeginFunc(ctx, pc, func(ptx pgx.Tx) error {
		c := conn{ptx}
		if err := c.ExecScript(ctx, `CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		if err := dialect.ApplyMigrations(ctx, c, before, time.Now()); err != nil {
			return err
		}
		for _, q := range storetest.OldRows {
			if _, err := ptx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	pc.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.CheckOldRows(t, db)
}
