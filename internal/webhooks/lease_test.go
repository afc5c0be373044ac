package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// clock is a test's controlled time, shared by the workers it drives.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// An attempt that outlives its lease loses the row: instance A claims a delivery and its POST
// hangs; A's lease runs out, instance B claims the row, delivers it and records that; then A's
// receiver fails A's attempt, and A's late outcome changes nothing: the delivery stays as B
// recorded it. On both stores.
func TestLateOutcomeAfterTheLeaseRanOut(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) { testLateOutcome(t, open(t)) })
	}
}

func testLateOutcome(t *testing.T, st store.Store) {
	ctx := as(t.Context(), "alice")
	svc := webhooks.NewService(st, open_, nil, nil)
	var calls atomic.Int64
	reached, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 { // A's attempt: it hangs until the test lets it fail
			close(reached)
			<-release
			http.Error(w, "too late", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	defer unblock()
	hook, err := svc.Create(ctx, webhooks.NewWebhook{URL: rcv.URL + "/hook", Events: []string{webhooks.RunCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, "sess_lease", 1, carryon.RunSucceeded)

	clk := &clock{now: time.Now()}
	worker := func(instance string) *webhooks.Worker {
		return webhooks.NewWorker(st, webhooks.WorkerConfig{Policy: open_, Instance: instance, Now: clk.Now,
			Timeout: time.Minute, MinBackoff: time.Hour})
	}
	a, b := worker("inst_a"), worker("inst_b")
	aDone := make(chan int)
	go func() {
		n, err := a.RunOnce(context.Background())
		if err != nil {
			t.Error(err)
		}
		aDone <- n
	}()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("A's attempt never reached the receiver")
	}
	clk.advance(3 * time.Minute) // past A's lease: 2 × the timeout + 5s
	if n, err := b.RunOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("B claimed %d deliveries (%v), want A's, whose lease ran out", n, err)
	}
	delivered := func(when string) {
		t.Helper()
		page, err := svc.Deliveries(ctx, hook.ID, "", 0)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("%s: the log %+v %v", when, page, err)
		}
		d := page.Items[0]
		if d.Status != "delivered" || d.ResponseCode != http.StatusNoContent || d.Attempts != 1 || d.LastError != "" || d.DeliveredAt == nil {
			t.Fatalf("%s: the delivery is %s (%d attempts, answer %d, last error %q), want delivered by B (204, one attempt)",
				when, d.Status, d.Attempts, d.ResponseCode, d.LastError)
		}
	}
	delivered("B's attempt recorded")
	unblock()
	if n := <-aDone; n != 1 {
		t.Fatalf("A attempted %d deliveries, want 1", n)
	}
	delivered("after A's late outcome")
	if n := calls.Load(); n != 2 {
		t.Fatalf("the receiver got %d attempts, want A's and B's", n)
	}
}
