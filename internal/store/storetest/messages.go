package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testMessages(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		full := &carryon.Message{
			SessionID: s.ID, Seq: 1, Role: carryon.RoleAssistant, Kind: carryon.KindMessage, Content: "calling a tool",
			Name: "helper", ToolCalls: json.RawMessage(`[{"id":"call_1","name":"read_file","arguments":{"path":"a.go"}}]`),
			RunID: "run_1", RequestID: "req_1", Tokens: 42, Metadata: json.RawMessage(`{"model":"m","temp":0.5}`),
			Version: 2, CreatedAt: at(1),
		}
		tool := &carryon.Message{
			SessionID: s.ID, Seq: 2, Role: carryon.RoleTool, Kind: carryon.KindMessage, Content: "package main",
			ToolCallID: "call_1", RunID: "run_1", Tokens: 3, Version: 2, CreatedAt: at(2),
		}
		summary := &carryon.Message{
			SessionID: s.ID, Seq: 3, Role: carryon.RoleSystem, Kind: carryon.KindSummary, Content: "so far",
			CoversFrom: 1, CoversTo: 2, Version: 3, CreatedAt: at(3),
		}
		want := []*carryon.Message{full, tool, summary}
		write(t, st, func(tx store.Tx) error { return tx.InsertMessages(ctx, ownerA, want[:2]) })
		write(t, st, func(tx store.Tx) error { return tx.InsertMessages(ctx, ownerA, want[2:]) })
		read(t, st, func(tx store.Tx) error {
			for name, get := range map[string]func() ([]*carryon.Message, error){
				"LastMessages":  func() ([]*carryon.Message, error) { return tx.LastMessages(ctx, ownerA, s, 10) },
				"MessagesAfter": func() ([]*carryon.Message, error) { return tx.MessagesAfter(ctx, ownerA, s, 0, 10) },
			} {
				got, err := get()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s returned %d messages, want %d", name, len(got), len(want))
				}
				for i := range want {
					checkMessage(t, got[i], want[i])
				}
			}
			return nil
		})
	})

	t.Run("Conflicts", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		appendMessages(t, st, s, "one", "two", "three")

		// A batch with one taken seq fails as a whole; the new seq before it is not stored.
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertMessages(ctx, ownerA, []*carryon.Message{
				newMessage(s.ID, 4, 5, "four"), newMessage(s.ID, 2, 5, "two again"),
			})
		})
		wantCode(t, err, carryon.ECONFLICT)
		for _, owner := range []string{ownerB, ownerA} {
			id := s.ID
			if owner == ownerA {
				id = "sess_missing"
			}
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertMessages(ctx, owner, []*carryon.Message{newMessage(id, 4, 5, "intruder")})
			})
			wantCode(t, err, carryon.ENOTFOUND)
		}
		read(t, st, func(tx store.Tx) error {
			got, err := tx.MessagesAfter(ctx, ownerA, s, 0, 10)
			if err != nil {
				return err
			}
			if want := []string{"one", "two", "three"}; !reflect.DeepEqual(contents(got), want) {
				t.Fatalf("messages = %v, want %v", contents(got), want)
			}
			return nil
		})
	})

	t.Run("Windows", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		var all []string
		for i := 1; i <= 10; i++ {
			all = append(all, fmt.Sprintf("m%d", i))
		}
		appendMessages(t, st, s, all...) // message seq i is stored at session version i+1
		insertSession(t, st, newSession(ownerA, "sess_empty", at(0)))
		read(t, st, func(tx store.Tx) error {
			last := func(limit int) []int64 {
				got, err := tx.LastMessages(ctx, ownerA, s, limit)
				if err != nil {
					t.Fatalf("LastMessages(%d): %v", limit, err)
				}
				return seqs(got)
			}
			after := func(a int64, limit int) []int64 {
				got, err := tx.MessagesAfter(ctx, ownerA, s, a, limit)
				if err != nil {
					t.Fatalf("MessagesAfter(%d, %d): %v", a, limit, err)
				}
				return seqs(got)
			}
			checkSeqs(t, "LastMessages(3)", last(3), 8, 9, 10)
			checkSeqs(t, "LastMessages(1)", last(1), 10)
			checkSeqs(t, "LastMessages(10)", last(10), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
			checkSeqs(t, "LastMessages(50)", last(50), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
			checkSeqs(t, "MessagesAfter(4, 3)", after(4, 3), 5, 6, 7)
			checkSeqs(t, "MessagesAfter(8, 10)", after(8, 10), 9, 10)
			checkSeqs(t, "MessagesAfter(10, 10)", after(10, 10))
			for v, want := range map[int64]int64{0: 0, 1: 0, 2: 1, 5: 4, 11: 10, 100: 10} {
				got, err := tx.SeqAtVersion(ctx, ownerA, s, v)
				if err != nil || got != want {
					t.Fatalf("SeqAtVersion(%d) = %d, %v; want %d", v, got, err, want)
				}
			}
			empty := &carryon.Session{ID: "sess_empty", OwnerID: ownerA}
			if got, err := tx.LastMessages(ctx, ownerA, empty, 5); err != nil || len(got) != 0 {
				t.Fatalf("LastMessages(empty session) = %v, %v", seqs(got), err)
			}
			return nil
		})
	})

	t.Run("Ownership", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession(ownerA, "sess_1", at(0))
		insertSession(t, st, s)
		appendMessages(t, st, s, "secret")
		missing := newSession(ownerA, "sess_missing", at(0))
		read(t, st, func(tx store.Tx) error {
			for _, c := range []struct {
				owner string
				s     *carryon.Session
			}{{ownerB, s}, {ownerA, missing}} {
				_, err := tx.LastMessages(ctx, c.owner, c.s, 10)
				wantCode(t, err, carryon.ENOTFOUND)
				_, err = tx.MessagesAfter(ctx, c.owner, c.s, 0, 10)
				wantCode(t, err, carryon.ENOTFOUND)
				_, err = tx.SeqAtVersion(ctx, c.owner, c.s, 100)
				wantCode(t, err, carryon.ENOTFOUND)
			}
			return nil
		})
	})
}

func checkSeqs(t testing.TB, what string, got []int64, want ...int64) {
	t.Helper()
	if want == nil {
		want = []int64{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s seqs = %v, want %v", what, got, want)
	}
}
