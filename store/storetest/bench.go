package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// benchSession makes a session of its own in st with history messages and returns it.
func benchSession(b *testing.B, st store.Store, history int) *carryon.Session {
	b.Helper()
	ctx := b.Context()
	s := newSession("usr_bench", carryon.NewID("sess_"), time.Now().UTC().Truncate(time.Microsecond))
	s.ExpiresAt = s.ExpiresAt.Add(24 * time.Hour)
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertSession(ctx, s) }); err != nil {
		b.Fatal(err)
	}
	const batch = 500
	for done := 0; done < history; {
		n := min(batch, history-done)
		err := st.Write(ctx, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			prev := cur.Version
			cur.Version++
			msgs := make([]*carryon.Message, n)
			for i := range msgs {
				cur.LastSeq++
				msgs[i] = benchMessage(cur, fmt.Sprintf("history message %d", cur.LastSeq))
			}
			cur.MessageCount += int64(n)
			if err := tx.InsertMessages(ctx, s.OwnerID, msgs); err != nil {
				return err
			}
			if err := tx.UpdateSession(ctx, cur, prev); err != nil {
				return err
			}
			*s = *cur
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += n
	}
	return s
}

func benchMessage(s *carryon.Session, content string) *carryon.Message {
	return &carryon.Message{
		SessionID: s.ID, Seq: s.LastSeq, Role: carryon.RoleUser, Kind: carryon.KindMessage, Content: content,
		Tokens: len(content) / 4, Version: s.Version, CreatedAt: time.Now().UTC().Truncate(time.Microsecond),
	}
}

// BenchAppend measures one turn's write: in one write transaction, read the session, append one
// message and store the session at its next version, on a session that already has history
// messages. Its cost must not depend on history.
func BenchAppend(b *testing.B, st store.Store, history int) {
	s := benchSession(b, st, history)
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		err := st.Write(ctx, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			prev := cur.Version
			cur.Version++
			cur.LastSeq++
			cur.MessageCount++
			cur.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
			cur.LastActiveAt = cur.UpdatedAt
			if err := tx.InsertMessages(ctx, s.OwnerID, []*carryon.Message{benchMessage(cur, "continue the task")}); err != nil {
				return err
			}
			return tx.UpdateSession(ctx, cur, prev)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchLastMessages measures restoring a session to continue it: in one read transaction, read
// the session and its last k messages, on a session with history messages. Its cost must not
// depend on history.
func BenchLastMessages(b *testing.B, st store.Store, history, k int) {
	s := benchSession(b, st, history)
	ctx := b.Context()
	want := min(k, history)
	b.ReportAllocs()
	for b.Loop() {
		err := st.Read(ctx, func(tx store.Tx) error {
			cur, err := tx.GetSession(ctx, s.OwnerID, s.ID)
			if err != nil {
				return err
			}
			msgs, err := tx.LastMessages(ctx, s.OwnerID, cur, k)
			if err != nil {
				return err
			}
			if len(msgs) != want {
				return fmt.Errorf("LastMessages returned %d messages, want %d", len(msgs), want)
			}
			if want > 0 && msgs[len(msgs)-1].Seq != cur.LastSeq {
				return fmt.Errorf("LastMessages ends at seq %d, want %d", msgs[len(msgs)-1].Seq, cur.LastSeq)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
