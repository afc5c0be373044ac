package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
)

// A user with max_concurrent_runs 1 (the admin's, over the server's 5) has one run running at a
// time, across two instances claiming at once: the others wait queued, and the next starts when
// the running one ends.
func TestRunLimitPerUser(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newHubEnv(t, d.open(t), sessions.Config{})
			one := int64(1)
			if err := e.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
				return tx.PutUserLimits(ctx, "usr_alice", carryon.Limits{MaxRuns: &one}, time.Now())
			}); err != nil {
				t.Fatal(err)
			}
			m := newBlocking()
			cfg := runs.Config{Poll: 10 * time.Millisecond, MaxRunsPerUser: 5}
			a := runner(t, e.st, e.sess, e.data, m, cfg)
			b := runner(t, e.st, e.sess, e.data, m, cfg)
			var ids []string
			for range 3 {
				_, run := e.startRun(t, a, "go")
				ids = append(ids, run.ID)
			}
			work(t, a)
			work(t, b)
			running := func() (n int, id string) {
				for _, r := range ids {
					if getRun(t, e.st, r).Status == carryon.RunRunning {
						n, id = n+1, r
					}
				}
				return n, id
			}
			for turn := range 2 {
				<-m.entered
				if poll.Within(500*time.Millisecond, func() bool { n, _ := running(); return n > 1 }) {
					t.Fatalf("turn %d: more than one run of the user running at once", turn)
				}
				n, id := running()
				if n != 1 {
					t.Fatalf("turn %d: %d runs running, want 1", turn, n)
				}
				if _, err := a.Cancel(e.alice, id, carryon.RetryOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
