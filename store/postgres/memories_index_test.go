package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/jackc/pgx/v5"
)

// TestMemoriesIndexInPlace: long-term memory's full-text index takes writes in place (no GIN
// pending list that every search would scan), and a keyword search of 3,000 items just written
// reads it rather than every row of the owner.
func TestMemoriesIndexInPlace(t *testing.T) {
	dsn := newSchema(t)
	db := open(t, dsn)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := db.Write(ctx, func(_ context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, &carryon.User{ID: "usr_a", Name: "a", CreatedAt: now}); err != nil {
			return err
		}
		for i := range 3000 {
			text := fmt.Sprintf("note w%d w%d about item %d", i%1000, (i*7)%1000, i)
			v, _ := json.Marshal(text)
			if err := tx.PutLongTermItem(ctx, "usr_a", &carryon.LongTermItem{Namespace: "notes", Key: fmt.Sprintf("k%d", i), Value: v, Text: text, Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var opts []string
	if err := conn.QueryRow(ctx, `SELECT coalesce(c.reloptions, '{}') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relname = 'memories_tsv' AND n.nspname = current_schema()`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(opts, ","), "fastupdate=off") {
		t.Fatalf("memories_tsv options: %v", opts)
	}
	if _, err := conn.Exec(ctx, "ANALYZE memories"); err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	rows, err := conn.Query(ctx, `EXPLAIN SELECT key FROM memories m WHERE m.tsv @@ to_tsquery('simple', $1) AND m.owner_id = 'usr_a'`, "'w17' | 'w423'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if rows.Close(); rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if !strings.Contains(plan.String(), "memories_tsv") {
		t.Fatalf("the search does not read the full-text index:\n%s", plan.String())
	}
}
