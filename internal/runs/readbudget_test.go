package runs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// A run whose events hold more bytes than one read's budget streams them all, in order, once,
// whether the stream follows the run or reads what is stored: each read stops at the budget and
// the next goes on after it.
func TestEventsPastTheReadBudget(t *testing.T) {
	f := newFixture(t, nil)
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	f.stop() // no runner: the run stays queued, and its events are the ones written here
	run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	big := fmt.Sprintf(`{"text":%q}`, strings.Repeat("y", 1<<20))
	const extra = 20 // 20 MiB of events: more than two reads' budgets
	err = f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for range extra {
			if err := tx.AppendEvent(ctx, run.OwnerID, &carryon.Event{RunID: run.ID, Type: carryon.EventModelDelta, Data: []byte(big)}); err != nil {
				return err
			}
		}
		return tx.AppendEvent(ctx, run.OwnerID, &carryon.Event{RunID: run.ID, Type: carryon.EventRunFinished, Data: []byte(`{}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, follow := range []bool{false, true} {
		st, err := f.runs.Events(f.alice, run.ID, 0, follow)
		if err != nil {
			t.Fatal(err)
		}
		var seq int64
		for {
			e, ok, err := st.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if e.Seq != seq+1 {
				t.Fatalf("follow=%v: event %d after %d", follow, e.Seq, seq)
			}
			seq = e.Seq
		}
		st.Close()
		if want == 0 {
			want = seq
		}
		if seq != want || seq < extra {
			t.Fatalf("follow=%v: the stream ended at %d, want %d (with the %d large events)", follow, seq, want, extra)
		}
	}
}
