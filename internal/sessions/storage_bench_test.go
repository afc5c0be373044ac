package sessions_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// BenchmarkStorage measures what a session costs on disk: turns of the workload (a user
// and an assistant message with a request id, the goal and next action patched in the same
// write), then the request ids' window passes and the sweeper removes them. It reports the
// bytes of the database's used pages (page_count - freelist_count, the WAL checkpointed) per
// message, the message text per message, and the ratio of the first to the target, 2 × text +
// 100 bytes per message (at most 1 meets it). b.N is not used: one run per size.
func BenchmarkStorage(b *testing.B) {
	for _, turns := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "storage.db")
			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			u := &carryon.User{ID: "usr_bench", Name: "bench"}
			if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
				b.Fatal(err)
			}
			ctx := carryon.NewContextWithUser(context.Background(), u)
			svc := sessions.New(st, sessions.Config{Now: func() time.Time { return now }})
			s, err := svc.Create(ctx, carryon.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			text := 0
			for i := range turns {
				user := fmt.Sprintf("turn %d: continue the task and tell me what changed since the last step", i)
				reply := fmt.Sprintf("step %d done: the tests pass; next I will update the documentation", i)
				text += len(user) + len(reply)
				in := carryon.AppendInput{
					Messages:           []carryon.NewMessage{{Role: carryon.RoleUser, Content: user}, {Role: carryon.RoleAssistant, Content: reply}},
					WorkingMemoryPatch: []byte(fmt.Sprintf(`{"goal":"finish the report for the quarterly review","next_action":"update the documentation after step %d"}`, i)),
					WriteOptions:       carryon.WriteOptions{RequestID: fmt.Sprintf("req-%08d-0f9c2b6e-4a51-4c3e-9d7a", i)},
				}
				if _, err := svc.AppendMessages(ctx, s.ID, in); err != nil {
					b.Fatal(err)
				}
				now = now.Add(time.Second)
			}
			err = st.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
				_, err := tx.SweepIdempotency(context.Background(), now.Add(30*24*time.Hour))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			used := usedBytes(b, path)
			if p := os.Getenv("CARRYON_STORAGE_KEEP"); p != "" {
				exec.Command("cp", path, p).Run()
			}
			msgs := 2 * turns
			b.ReportMetric(float64(used)/float64(msgs), "bytes/msg")
			b.ReportMetric(float64(text)/float64(msgs), "text-bytes/msg")
			b.ReportMetric(float64(used)/float64(2*text+100*msgs), "of-target")
		})
	}
}

// usedBytes returns the bytes of the used pages of the database at path, after a checkpoint.
func usedBytes(b *testing.B, path string) int64 {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	var pages, free, size int64
	for q, v := range map[string]*int64{`PRAGMA page_count`: &pages, `PRAGMA freelist_count`: &free, `PRAGMA page_size`: &size} {
		if err := db.QueryRow(q).Scan(v); err != nil {
			b.Fatal(err)
		}
	}
	return (pages - free) * size
}
