package sessions_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/store/storetest"
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
	if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
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

// histories are the session lengths the per-session benchmarks run at.
var histories = []int{10, 1000, 10000, 100000}

// BenchmarkAppend appends one message (with a request id) to sessions of growing history: the
// cost must stay flat.
func BenchmarkAppend(b *testing.B) {
	for _, history := range histories {
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
	for _, history := range histories {
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

// BenchmarkAppendConcurrent is the durable append of the HTTP route (a user message with a
// request id, SQLite at synchronous=FULL) from 1, 16 and 64 writers at once, each on a session of
// its own: b.N appends in all. It reports appends/s, p50 and p99 (ms); group commit is what makes
// the 64-writer rate a multiple of the 1-writer one.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			svc, ctx, _ := benchSession(b, 0)
			ids := make([]string, writers)
			for i := range ids {
				s, err := svc.Create(ctx, carryon.NewSession{})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = s.ID
			}
			storetest.BenchWriters(b, writers, func(w, i int) error {
				in := carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "continue the task"}},
					WriteOptions: carryon.WriteOptions{RequestID: fmt.Sprintf("r%d", i)}}
				_, err := svc.AppendMessages(ctx, ids[w], in)
				return err
			})
		})
	}
}

// BenchmarkGetForkChain restores the last fork of a chain made through the service (each fork of
// the one before, with one message of its own) and its root in turn, so that both figures are
// taken under the same load: the fork's cost (µs), the root's, and their ratio.
func BenchmarkGetForkChain(b *testing.B) {
	for _, depth := range []int{1, 1000} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			svc, ctx, root := benchSession(b, 1000)
			head := root
			for i := range depth {
				f, err := svc.Fork(ctx, head, carryon.ForkInput{})
				if err != nil {
					b.Fatal(err)
				}
				in := carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: fmt.Sprintf("fork %d", i)}}}
				if _, err := svc.AppendMessages(ctx, f.ID, in); err != nil {
					b.Fatal(err)
				}
				head = f.ID
			}
			get := func(id string) time.Duration {
				t0 := time.Now()
				v, err := svc.Get(ctx, id, carryon.GetOptions{Messages: 20})
				if err != nil || len(v.Messages) != 20 {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			var rootT, headT time.Duration
			b.ResetTimer()
			for range b.N {
				rootT += get(root)
				headT += get(head)
			}
			n := float64(b.N)
			b.ReportMetric(float64(rootT.Microseconds())/n, "root-µs")
			b.ReportMetric(float64(headT.Microseconds())/n, "end-µs")
			b.ReportMetric(float64(headT)/float64(rootT), "end/root")
		})
	}
}
