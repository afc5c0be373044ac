package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// OldRows are the rows CheckOldRows reads, in the schema before the migration that keys
// messages by a session key and stores their run and request ids once per write (SQLite 0018,
// PostgreSQL 0017), as both drivers take them: a session and a fork of it whose parent was deleted (its first four rows are copies,
// at the parent's versions 2 to 4, which its own rows use too), and a fork of the first with its
// chain stored as it was then (segments naming sessions by id), and two revisions of the first
// (the second stores its patch alone). A driver's migration test stores
// them with the migrations before that one and then opens the database.
var OldRows = []string{
	`INSERT INTO sessions (id, owner_id, status, version, created_at, updated_at, last_active_at, expires_at, message_count, last_seq) VALUES
		('sess_old', 'usr_a', 'active', 5, 0, 0, 0, 9999999999999999, 5, 5),
		('sess_fork', 'usr_a', 'active', 3, 0, 0, 0, 9999999999999999, 6, 6)`,
	`INSERT INTO sessions (id, owner_id, status, version, parent_id, fork_seq, created_at, updated_at, last_active_at, expires_at, message_count, last_seq) VALUES
		('sess_child', 'usr_a', 'active', 2, 'sess_old', 3, 1, 1, 1, 9999999999999999, 4, 4)`,
	`INSERT INTO fork_chains (session_id, segments) VALUES ('sess_child', '0 3 sess_old
')`,
	`INSERT INTO messages (session_id, seq, role, kind, content, run_id, request_id, version, created_at) VALUES
		('sess_old', 1, 'user', '', 'a', '', 'req_a', 2, 0), ('sess_old', 2, 'assistant', '', 'b', '', 'req_a', 2, 0),
		('sess_old', 3, 'user', '', 'c', '', '', 3, 0), ('sess_old', 4, 'assistant', '', 'd', 'run_d', '', 4, 0),
		('sess_old', 5, 'user', '', 'e', 'run_e', 'req_e', 5, 0),
		('sess_fork', 1, 'user', '', 'a', '', 'req_a', 2, 0), ('sess_fork', 2, 'assistant', '', 'b', '', 'req_a', 2, 0),
		('sess_fork', 3, 'user', '', 'c', '', '', 3, 0), ('sess_fork', 4, 'assistant', '', 'd', 'run_d', '', 4, 0),
		('sess_fork', 5, 'user', '', 'f', '', 'req_f', 2, 0), ('sess_fork', 6, 'user', '', 'g', '', 'req_g', 3, 0),
		('sess_child', 4, 'user', '', 'x', 'run_x', '', 2, 0)`,
	`INSERT INTO memory_revisions (session_id, memory_version, version, patch, document, run_id, created_at) VALUES
		('sess_old', 1, 2, '{"goal":"a"}', '{"goal":"a"}', '', 0), ('sess_old', 2, 3, '{"next_action":"b"}', NULL, 'run_b', 0)`,
	`INSERT INTO working_memory (session_id, document, memory_version) VALUES ('sess_old', '{"goal":"a","next_action":"b"}', 2)`,
}

// CheckOldRows reads the rows of OldRows after the migration, each message with the ids it was
// stored with and each fork with what it inherits, and the revisions, then stores a new session
// and appends to the fork and reads them again.
func CheckOldRows(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	want := map[string]string{
		"sess_old":   "[a:req_a/ b:req_a/ c:/ d:/run_d e:req_e/run_e]",
		"sess_fork":  "[a:req_a/ b:req_a/ c:/ d:/run_d f:req_f/ g:req_g/]",
		"sess_child": "[a:req_a/ b:req_a/ c:/ x:/run_x]",
	}
	sessions := map[string]*carryon.Session{}
	err := st.Read(ctx, func(tx store.Tx) error {
		for id, w := range want {
			s, err := tx.GetSession(ctx, "usr_a", id)
			if err != nil {
				return err
			}
			sessions[id] = s
			msgs, err := tx.MessagesAfter(ctx, "usr_a", s, 0, 0)
			if err != nil {
				return err
			}
			if got := fmt.Sprint(writeIDsOf(msgs)); got != w {
				t.Errorf("%s after the migration: %s, want %s", id, got, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Read(ctx, func(tx store.Tx) error {
		revs, err := tx.ListWorkingMemoryRevisions(ctx, "usr_a", "sess_old", 0, 0)
		if err != nil {
			return err
		}
		var got []string
		for _, r := range revs {
			got = append(got, fmt.Sprintf("%d %s %s %s", r.WorkingMemoryVersion, r.Patch, r.RunID, r.Document))
		}
		if w := "[2 {\"next_action\":\"b\"} run_b map[goal:a next_action:b] 1 {\"goal\":\"a\"}  map[goal:a]]"; fmt.Sprint(got) != w {
			t.Errorf("revisions after the migration: %s, want %s", got, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The migration indexed the messages each session shows, a fork's inherited ones included.
	for text, w := range map[string][]string{"c": {"sess_child", "sess_old", "sess_fork"}, "x": {"sess_child"},
		"e": {"sess_old"}, "g": {"sess_fork"}, "a b": {}} {
		if got := search(t, st, "usr_a", terms(text)); !reflect.DeepEqual(got, w) {
			t.Errorf("search for %q after the migration = %v, want %v", text, got, w)
		}
	}
	// A session made after the migration gets a key of its own.
	n := &carryon.Session{ID: "sess_new", OwnerID: "usr_a", Status: carryon.SessionActive, Version: 1,
		CreatedAt: time.Unix(2, 0), UpdatedAt: time.Unix(2, 0), LastActiveAt: time.Unix(2, 0), ExpiresAt: time.Unix(9999999999, 0)}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertSession(ctx, n); err != nil {
			return err
		}
		return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{{SessionID: n.ID, Seq: 1, Role: carryon.RoleUser,
			Content: "n", Version: 2, CreatedAt: time.Unix(2, 0)}})
	})
	if err != nil {
		t.Fatal(err)
	}
	n.LastSeq = 1
	err = st.Read(ctx, func(tx store.Tx) error {
		for s, w := range map[*carryon.Session]string{n: "[n:/]", sessions["sess_old"]: want["sess_old"]} {
			msgs, err := tx.MessagesAfter(ctx, "usr_a", s, 0, 0)
			if got := fmt.Sprint(writeIDsOf(msgs)); err == nil && got != w {
				t.Errorf("%s after a new session: %s, want %s", s.ID, got, w)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f := sessions["sess_fork"]
	m := &carryon.Message{SessionID: f.ID, Seq: 7, Role: carryon.RoleUser, Content: "h", RequestID: "req_h", Version: 4, CreatedAt: time.Unix(1, 0)}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{m})
	})
	if err != nil {
		t.Fatal(err)
	}
	f.LastSeq = 7
	err = st.Read(ctx, func(tx store.Tx) error {
		msgs, err := tx.LastMessages(ctx, "usr_a", f, 2)
		if got := fmt.Sprint(writeIDsOf(msgs)); err == nil && got != "[g:req_g/ h:req_h/]" {
			t.Errorf("fork after an append: %s", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeIDsOf(ms []*carryon.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content + ":" + m.RequestID + "/" + m.RunID
	}
	return out
}
