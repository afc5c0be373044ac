package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/sqlq"
)

// recordingConn keeps the text of every statement a transaction runs.
type recordingConn struct {
	sqlq.Conn
	texts []string
}

func (c *recordingConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.texts = append(c.texts, q)
	return c.Conn.Exec(ctx, q, args...)
}

func (c *recordingConn) Query(ctx context.Context, q string, args ...any) (sqlq.Rows, error) {
	c.texts = append(c.texts, q)
	return c.Conn.Query(ctx, q, args...)
}

func (c *recordingConn) QueryRow(ctx context.Context, q string, args ...any) sqlq.Row {
	c.texts = append(c.texts, q)
	return c.Conn.QueryRow(ctx, q, args...)
}

func (c *recordingConn) ExecEach(ctx context.Context, q string, argLists [][]any) (int, error) {
	c.texts = append(c.texts, q)
	return c.Conn.ExecEach(ctx, q, argLists)
}

func memoSession(id string) *carryon.Session {
	when := time.Unix(1_700_000_000, 0).UTC()
	return &carryon.Session{ID: id, OwnerID: "usr_a", Title: "t", Status: carryon.SessionActive, Version: 1,
		CreatedAt: when, UpdatedAt: when, LastActiveAt: when, ExpiresAt: when.Add(time.Hour), IdleTTLSeconds: 3600}
}

func memoMessage(s *carryon.Session, seq int64, content string) *carryon.Message {
	return &carryon.Message{SessionID: s.ID, Seq: seq, Role: carryon.RoleUser, Kind: carryon.KindMessage,
		Content: content, Version: s.Version, CreatedAt: s.CreatedAt}
}

// A turn's write reads the session and its working memory once: the store takes the session's
// key and the previous document for a patch-only revision from what the transaction read
// already, and what it stores is what the statements that read again would have stored.
func TestWriteReadsOnce(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := memoSession("sess_m")
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, user("a")); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, s); err != nil {
			return err
		}
		return tx.InsertWorkingMemoryRevision(ctx, "usr_a", &carryon.WorkingMemoryRevision{SessionID: s.ID,
			WorkingMemoryVersion: 1, Version: 1, Patch: json.RawMessage(`{"goal":"g"}`), Document: carryon.WorkingMemory{"goal": "g"}, CreatedAt: s.CreatedAt})
	})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	err = db.Write(ctx, func(ctx context.Context, stx store.Tx) error {
		x := stx.(*tx)
		rc := &recordingConn{Conn: x.Tx.Conn}
		x.Tx.Conn = rc
		defer func() { texts = rc.texts }()
		cur, err := x.GetSession(ctx, "usr_a", s.ID)
		if err != nil {
			return err
		}
		wm, mv, err := x.GetWorkingMemory(ctx, "usr_a", s.ID)
		if err != nil || mv != 1 || wm["goal"] != "g" {
			return errors.Join(err, errors.New("memory read wrong"))
		}
		cur.Version++
		cur.LastSeq++
		cur.MessageCount++
		cur.WorkingMemoryVersion = 2
		if err := x.InsertWorkingMemoryRevision(ctx, "usr_a", &carryon.WorkingMemoryRevision{SessionID: s.ID, WorkingMemoryVersion: 2,
			Version: cur.Version, Patch: json.RawMessage(`{"next_action":"n"}`), Document: carryon.WorkingMemory{"goal": "g", "next_action": "n"}, CreatedAt: s.CreatedAt}); err != nil {
			return err
		}
		if err := x.UpdateSession(ctx, cur, 1); err != nil {
			return err
		}
		return x.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(cur, 1, "hello")})
	})
	if err != nil {
		t.Fatal(err)
	}
	var sessionReads, memoryReads int
	for _, q := range texts {
		if strings.HasPrefix(q, "SELECT") && strings.Contains(q, "FROM sessions WHERE id = ?") {
			sessionReads++
		}
		if strings.Contains(q, "FROM working_memory WHERE") {
			memoryReads++
		}
	}
	if sessionReads != 1 || memoryReads != 0 {
		t.Errorf("the write read the session row %d times (want 1) and the memory table %d times (want 0, the join read it):\n%s",
			sessionReads, memoryReads, strings.Join(texts, "\n"))
	}
	err = db.Read(ctx, func(rtx store.Tx) error {
		r, err := rtx.GetWorkingMemoryRevision(ctx, "usr_a", s.ID, 2)
		if err != nil || r.Document["next_action"] != "n" || r.Document["goal"] != "g" {
			return errors.Join(err, errors.New("revision 2 reads back wrong"))
		}
		var stored *string
		if err := rtx.(*tx).Tx.Conn.QueryRow(ctx, `SELECT document FROM memory_revisions WHERE memory_version = 2`).Scan(&stored); err != nil {
			return err
		}
		if stored != nil {
			return errors.New("revision 2 stores its whole document, not only its patch")
		}
		cur, err := rtx.GetSession(ctx, "usr_a", s.ID)
		if err != nil {
			return err
		}
		msgs, err := rtx.LastMessages(ctx, "usr_a", cur, 10)
		if err != nil || len(msgs) != 1 || msgs[0].Content != "hello" {
			return errors.Join(err, errors.New("the message reads back wrong"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The members of a batch share a transaction, not what they read: a member rolled back after
// reading a session's key leaves nothing for the next. Here the first member makes session S
// and appends to it, then fails; the next makes T, which takes the key S had, then S again; its
// message must land in S, not in T.
func TestGroupCommitMembersForgetReads(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertUser(ctx, user("a")) }); err != nil {
		t.Fatal(err)
	}
	release := holdLead(ctx, db, func(context.Context, store.Tx) error { return nil })
	boom := errors.New("boom")
	sess, other := memoSession("sess_s"), memoSession("sess_t")
	fns := []func(_ context.Context, tx store.Tx) error{
		func(_ context.Context, tx store.Tx) error {
			if err := tx.InsertSession(ctx, sess); err != nil {
				return err
			}
			if err := tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(sess, 1, "rolled back")}); err != nil {
				return err
			}
			return boom
		},
		func(_ context.Context, tx store.Tx) error {
			if err := tx.InsertSession(ctx, other); err != nil {
				return err
			}
			if err := tx.InsertSession(ctx, sess); err != nil {
				return err
			}
			return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(sess, 1, "for S")})
		},
	}
	errs := make([]chan error, len(fns))
	for i, fn := range fns {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- db.Write(ctx, fn) }()
		waitPending(t, db, i+1)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs[0]; !errors.Is(err, boom) {
		t.Fatalf("the first member: %v, want boom", err)
	}
	if err := <-errs[1]; err != nil {
		t.Fatalf("the second member: %v", err)
	}
	err = db.Read(ctx, func(tx store.Tx) error {
		for id, want := range map[string]string{"sess_s": "for S", "sess_t": ""} {
			cur, err := tx.GetSession(ctx, "usr_a", id)
			if err != nil {
				return err
			}
			cur.LastSeq = 1
			msgs, err := tx.LastMessages(ctx, "usr_a", cur, 10)
			if err != nil {
				return err
			}
			var got string
			for _, m := range msgs {
				got += m.Content
			}
			if got != want {
				t.Errorf("%s holds %q, want %q", id, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Restoring a session reads its row once: the messages of one without a parent are its own
// rows, under the key the read of the session gave, and a fork's chain comes with its row. Then
// each read of messages is one statement.
func TestRestoreReadsOnce(t *testing.T) {
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	root, fork := memoSession("sess_r"), memoSession("sess_f")
	fork.ParentID, fork.ForkSeq, fork.LastSeq = root.ID, 2, 3
	err = db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertUser(ctx, user("a")); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, root); err != nil {
			return err
		}
		if err := tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(root, 1, "one"), memoMessage(root, 2, "two")}); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, fork); err != nil {
			return err
		}
		return tx.InsertMessages(ctx, "usr_a", []*carryon.Message{memoMessage(fork, 3, "three")})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, last string
		lastSeq  int64
		after    int
	}{{root.ID, "two", 2, 1}, {fork.ID, "three", 3, 2}} {
		err = db.Read(ctx, func(stx store.Tx) error {
			x := stx.(*tx)
			rc := &recordingConn{Conn: x.Tx.Conn}
			x.Tx.Conn = rc
			cur, err := x.GetSession(ctx, "usr_a", c.id)
			if err != nil {
				return err
			}
			cur.LastSeq = c.lastSeq // as the writes would have stored it
			rc.texts = nil
			last, err := x.LastMessages(ctx, "usr_a", cur, 10)
			if err != nil {
				return err
			}
			after, err := x.MessagesAfter(ctx, "usr_a", cur, 1, 0)
			if err != nil {
				return err
			}
			if len(last) != int(c.lastSeq) || last[len(last)-1].Content != c.last || len(after) != c.after {
				t.Errorf("%s: read back %d and %d messages", c.id, len(last), len(after))
			}
			if len(rc.texts) != 2 {
				t.Errorf("%s: the two reads of messages ran %d statements, want 2:\n%s", c.id, len(rc.texts), strings.Join(rc.texts, "\n"))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
