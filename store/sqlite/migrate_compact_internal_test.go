package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// A database written before the compact storage migration (0016) keeps every row readable
// after them: plain messages stored with kind 'message', revisions that each hold their whole
// document, answers of request ids stored uncompressed. New revisions then store only their
// patch, and read back whole.
func TestMigrateCompactStorage(t *testing.T) {
	ctx := t.Context()
	now := time.Unix(1700000000, 0).UTC()
	s := &carryon.Session{ID: "sess_old", OwnerID: "usr_a", Status: carryon.SessionActive, Version: 3, CreatedAt: now,
		UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour), LastSeq: 2, MessageCount: 2, WorkingMemoryVersion: 2}
	db := openAfterUpgrade(t, 16, []string{
		`INSERT INTO sessions (id, owner_id, status, version, created_at, updated_at, last_active_at, expires_at,
			message_count, last_seq, memory_version) VALUES ('sess_old', 'usr_a', 'active', 3, 0, 0, 0, 9999999999999999, 2, 2, 2)`,
		`INSERT INTO messages (session_id, seq, role, kind, content, version, created_at) VALUES
			('sess_old', 1, 'user', 'message', 'hello', 2, 0), ('sess_old', 2, 'assistant', 'summary', 'short', 2, 0)`,
		`INSERT INTO memory_revisions (session_id, memory_version, version, patch, document, run_id, created_at) VALUES
			('sess_old', 1, 2, '{"goal":"a"}', '{"goal":"a"}', '', 0),
			('sess_old', 2, 3, '{"next_action":"b"}', '{"goal":"a","next_action":"b"}', '', 0)`,
		`INSERT INTO working_memory (session_id, document, memory_version) VALUES ('sess_old', '{"goal":"a","next_action":"b"}', 2)`,
		`INSERT INTO idempotency (owner_id, key, session_id, fingerprint, state, result, created_at, expires_at) VALUES
			('usr_a', 'req', 'sess_old', 'fp', 'done', CAST('{"session_id":"sess_old","messages":[{"seq":1,"content":"hello, hello, hello, hello, hello, hello"}]}' AS BLOB), 0, 9999999999999999)`,
	})
	if v, err := db.MigrationVersion(ctx); err != nil || v < 16 {
		t.Fatalf("migration version %d, %v", v, err)
	}
	var kinds []carryon.MessageKind
	err := db.Read(ctx, func(tx store.Tx) error {
		msgs, err := tx.LastMessages(ctx, "usr_a", s, 10)
		for _, m := range msgs {
			kinds = append(kinds, m.Kind)
		}
		if err != nil {
			return err
		}
		for mv, want := range map[int64]string{1: `{"goal":"a"}`, 2: `{"goal":"a","next_action":"b"}`} {
			r, err := tx.GetWorkingMemoryRevision(ctx, "usr_a", s.ID, mv)
			if err != nil {
				return err
			}
			if got, _ := json.Marshal(r.Document); string(got) != want {
				t.Errorf("revision %d after the migration: %s, want %s", mv, got, want)
			}
		}
		rec, err := tx.GetIdempotency(ctx, "usr_a", "req")
		if err != nil {
			return err
		}
		if !json.Valid(rec.Result) {
			t.Errorf("an old request id's answer reads as %q", rec.Result)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[0] != carryon.KindMessage || kinds[1] != "summary" {
		t.Fatalf("kinds after the migration: %v", kinds)
	}

	// A revision written now stores its patch alone, and reads back whole.
	r := &carryon.WorkingMemoryRevision{SessionID: s.ID, WorkingMemoryVersion: 3, Version: 4, Patch: json.RawMessage(`{"goal":null}`),
		Document: carryon.WorkingMemory{"next_action": "b"}, CreatedAt: now}
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertWorkingMemoryRevision(ctx, "usr_a", r) }); err != nil {
		t.Fatal(err)
	}
	var stored sql.NullString
	var kind string
	if err := db.sql.QueryRowContext(ctx, `SELECT document FROM memory_revisions WHERE session_key = (SELECT session_key FROM sessions WHERE id = 'sess_old') AND memory_version = 3`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := db.sql.QueryRowContext(ctx, `SELECT kind FROM messages WHERE session_key = (SELECT session_key FROM sessions WHERE id = 'sess_old') AND seq = 1`).Scan(&kind); err != nil {
		t.Fatal(err)
	}
	if stored.Valid || kind != "" {
		t.Errorf("after the migration a patch revision stores document %v, a plain message kind %q", stored, kind)
	}
	err = db.Read(context.Background(), func(tx store.Tx) error {
		got, err := tx.GetWorkingMemoryRevision(ctx, "usr_a", s.ID, 3)
		if err == nil && (len(got.Document) != 1 || got.Document.NextAction() != "b") {
			t.Errorf("revision 3 reads as %v", got.Document)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
