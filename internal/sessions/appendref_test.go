package sessions_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// An append's request id keeps a reference, not the answer: the record is a few bytes, and a
// repeat answers the first answer byte for byte (messages, version, the patched memory, or the
// memory a patch left unchanged), except for a message deleted since, which it leaves out.
func TestAppendRepeatReadsItsAnswerBack(t *testing.T) {
	f := newFixture(t)
	s := f.create(t, f.alice)
	cases := []struct {
		name  string
		in    carryon.AppendInput
		after func(t *testing.T, first *carryon.AppendResult) // changes the session before the repeat
		want  func(first *carryon.AppendResult) *carryon.AppendResult
	}{
		{name: "with a patch", in: carryon.AppendInput{
			Messages: []carryon.NewMessage{
				{Role: carryon.RoleUser, Content: "continue", Metadata: json.RawMessage(`{"b": 1, "a": [1, 2]}`)},
				{Role: carryon.RoleAssistant, Content: "done", ToolCalls: json.RawMessage(`[{"id": "c1", "name": "f", "arguments": {"x": 1}}]`)},
				{Role: carryon.RoleTool, Content: "42", ToolCallID: "c1", Name: "f"},
			},
			WorkingMemoryPatch: json.RawMessage(`{"goal": "ship", "next_action": "test"}`),
		}},
		{name: "a patch that changes nothing", in: carryon.AppendInput{
			Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: "again"}},
			WorkingMemoryPatch: json.RawMessage(`{"goal": "ship"}`),
		}},
		{name: "no patch, a message deleted since", in: carryon.AppendInput{
			Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "one"}, {Role: carryon.RoleAssistant, Content: "two"}, {Role: carryon.RoleUser, Content: "three"}},
		}, after: func(t *testing.T, first *carryon.AppendResult) {
			if _, err := f.svc.DeleteMessage(f.alice, s.ID, first.Messages[1].Seq, carryon.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, want: func(first *carryon.AppendResult) *carryon.AppendResult {
			w := *first
			w.Messages = []*carryon.Message{first.Messages[0], first.Messages[2]}
			return &w
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.RequestID = "append-" + string(rune('a'+i))
			first, err := f.svc.AppendMessages(f.alice, s.ID, c.in)
			if err != nil {
				t.Fatal(err)
			}
			var stored *store.IdempotencyRecord
			err = f.st.Read(context.Background(), func(tx store.Tx) error {
				stored, err = tx.GetIdempotency(context.Background(), "usr_alice", c.in.RequestID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(stored.Result) > 64 || stored.Result[0] != 0x01 {
				t.Fatalf("the record keeps %d bytes %q, want a reference of a few", len(stored.Result), stored.Result)
			}
			want := first
			if c.after != nil {
				c.after(t, first)
				want = c.want(first)
			}
			f.clock.Add(1)
			var rec carryon.WriteReceipt
			again, err := f.svc.AppendMessages(carryon.NewContextWithReceipt(f.alice, &rec), s.ID, c.in)
			if err != nil {
				t.Fatal(err)
			}
			a, b := mustMarshal(t, want), mustMarshal(t, again)
			if !rec.Replayed || a != b {
				t.Fatalf("repeat (replayed %v):\n%s\nwant\n%s", rec.Replayed, b, a)
			}
		})
	}
}
