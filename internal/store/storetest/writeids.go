package storetest

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// testWriteIDs checks the run and request ids of messages, which a driver may store once per
// write: every message reads back with the ids it was stored with, in a fork too, before and
// after the ancestors it inherits from are deleted (when a fork holds copies of rows stored at
// versions of its ancestors that its own writes use as well).
func testWriteIDs(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	g := newSession(ownerA, "sess_g", at(0))
	insertSession(t, st, g)
	appendWrite(t, st, g, "req_g2", "", 1)      // v2: seq 1
	appendWrite(t, st, g, "req_g3", "run_g", 2) // v3: seq 2, 3
	appendWrite(t, st, g, "", "", 1)            // v4: seq 4
	p := fork(t, st, g, "sess_p", 4, g.Version)
	appendWrite(t, st, p, "req_p2", "", 1) // v2: seq 5
	appendWrite(t, st, p, "", "", 1)       // v3: seq 6
	appendWrite(t, st, p, "req_p4", "", 2) // v4: seq 7, 8
	f := fork(t, st, p, "sess_f", 7, p.Version)
	appendWrite(t, st, f, "", "run_f2", 1) // v2: seq 8
	appendWrite(t, st, f, "req_f3", "", 1) // v3: seq 9
	appendWrite(t, st, f, "", "", 1)       // v4: seq 10
	// Two messages of one write with different ids, and a write of another session between.
	write(t, st, func(tx store.Tx) error {
		f.Version++
		ms := []*carryon.Message{newMessage(f.ID, 11, f.Version, "f11"), newMessage(f.ID, 12, f.Version, "f12")}
		ms[0].RequestID, ms[1].RunID = "req_f5", "run_f5"
		f.LastSeq, f.MessageCount = 12, 12
		if err := tx.InsertMessages(ctx, ownerA, ms); err != nil {
			return err
		}
		return tx.UpdateSession(ctx, f, f.Version-1)
	})
	want := map[string][]string{
		g.ID: {"req_g2/", "req_g3/run_g", "req_g3/run_g", "/"},
		p.ID: {"req_g2/", "req_g3/run_g", "req_g3/run_g", "/", "req_p2/", "/", "req_p4/", "req_p4/"},
		f.ID: {"req_g2/", "req_g3/run_g", "req_g3/run_g", "/", "req_p2/", "/", "req_p4/", "/run_f2", "req_f3/", "/", "req_f5/", "/run_f5"},
	}
	check := func(sessions ...*carryon.Session) {
		t.Helper()
		read(t, st, func(tx store.Tx) error {
			for _, s := range sessions {
				got, err := tx.MessagesAfter(ctx, ownerA, s, 0, 0)
				if err != nil {
					return err
				}
				last, err := tx.LastMessages(ctx, ownerA, s, 100)
				if err != nil {
					return err
				}
				if fmt.Sprint(writeIDs(got)) != fmt.Sprint(want[s.ID]) || fmt.Sprint(writeIDs(last)) != fmt.Sprint(want[s.ID]) {
					t.Errorf("%s: ids %v and %v, want %v", s.ID, writeIDs(got), writeIDs(last), want[s.ID])
				}
			}
			return nil
		})
	}
	check(g, p, f)
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, g.ID) })
	check(p, f)
	write(t, st, func(tx store.Tx) error { return tx.DeleteSession(ctx, ownerA, p.ID) })
	check(f)
}

// appendWrite appends n messages to s in one write (the session's next version) with the run
// and request ids given, and updates s.
func appendWrite(t testing.TB, st store.Store, s *carryon.Session, requestID, runID string, n int) {
	t.Helper()
	write(t, st, func(tx store.Tx) error {
		prev := *s
		s.Version++
		var ms []*carryon.Message
		for range n {
			s.LastSeq++
			s.MessageCount++
			m := newMessage(s.ID, s.LastSeq, s.Version, fmt.Sprintf("m%d", s.LastSeq))
			m.RequestID, m.RunID = requestID, runID
			ms = append(ms, m)
		}
		if err := tx.InsertMessages(t.Context(), s.OwnerID, ms); err != nil {
			*s = prev
			return err
		}
		return tx.UpdateSession(t.Context(), s, prev.Version)
	})
}

func writeIDs(ms []*carryon.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.RequestID + "/" + m.RunID
	}
	return out
}
