package sessions_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/sessions"
	"github.com/carryon-hub/carryon/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// benchSession returns a service over a fresh SQLite file and a session holding history messages.
func benchSession(b *testing.B, history int) (*sessions.Service, context.Context, string) {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	u := &carryon.User{ID: "usr_bench", Name: "bench"}
	if err := st.Write(context.Background(), func(tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		b.Fatal(err)
	}
	ctx := carryon.NewContextWithUser(context.Background(), u)
	svc := sessions.New(st, sessions.Config{})
	s, err := svc.Create(ctx, carryon.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	for done := 0; done < history; {
		n := min(carryon.MaxAppendMessages, history-done)
		in := carryon.AppendInput{Messages: make([]carryon.NewMessage, n)}
		for i := range in.Messages {
			in.Messages[i] = carryon.NewMessage{Role: carryon.RoleUser, Content: fmt.Sprintf("message %d with some ordinary length of text", done+i)}
		}
		if _, err := svc.AppendMessages(ctx, s.ID, in); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	return svc, ctx, s.ID
}

// BenchmarkAppend appends one message (with a request id) to sessions of growing history: the
// cost must stay flat.
func BenchmarkAppend(b *testing.B) {
	for _, history := range []int{10, 10000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			svc, ctx, id := benchSession(b, history)
			b.ResetTimer()
			for i := range b.N {
				in := carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "continue the task"}},
					WriteOptions: carryon.WriteOptions{RequestID: fmt.Sprintf("r%d", i)}}
				if _, err := svc.AppendMessages(ctx, id, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGet restores a session to continue it: the session row, the working memory and the
// last 20 messages. The cost must not grow with history.
func BenchmarkGet(b *testing.B) {
	for _, history := range []int{20, 1000, 10000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			svc, ctx, id := benchSession(b, history)
			b.ResetTimer()
			for range b.N {
				v, err := svc.Get(ctx, id, carryon.GetOptions{Messages: 20})
				if err != nil || len(v.Messages) != min(20, history) {
					b.Fatal(err)
				}
			}
		})
	}
}
