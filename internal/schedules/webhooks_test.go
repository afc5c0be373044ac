package schedules_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/dbopen"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// TestScheduleFiredWebhook: a webhook subscribed to schedule.fired receives it exactly once per
// tick, from the outbox row the claim wrote, with ids only; a repeated Tick at the same clock
// queues nothing more, and a webhook of run events only gets none of them.
func TestScheduleFiredWebhook(t *testing.T) {
	t.Parallel()
	testScheduleFiredWebhook(t, "")
}

// TestScheduleFiredWebhookPostgres is TestScheduleFiredWebhook on PostgreSQL.
func TestScheduleFiredWebhookPostgres(t *testing.T) {
	t.Parallel()
	testScheduleFiredWebhook(t, pgtest.NewDatabase(t))
}

func testScheduleFiredWebhook(t *testing.T, dsn string) {
	clk := newClock()
	var mu sync.Mutex
	var got []map[string]any
	var ids []string
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var p map[string]any
		if err := json.Unmarshal(b, &p); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		mu.Lock()
		got = append(got, p)
		ids = append(ids, r.Header.Get("webhook-id"))
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	data := t.TempDir()
	st, err := dbopen.Open(t.Context(), data, dsn, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.Open(t.Context(), app.Options{Data: data, Store: st, NoScheduler: true, Now: clk.Now, ScheduleMinInterval: time.Minute,
		Webhooks: webhooks.WorkerConfig{Policy: webhooks.Policy{AllowHTTP: true, AllowPrivate: true}, Now: clk.Now, Interval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	as := user(t, h, "alice")
	s := session(t, h, as)
	hook, err := h.Webhooks.Create(as, webhooks.NewWebhook{URL: rc.URL + "/hook", Events: []string{webhooks.ScheduleFired}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := h.Webhooks.Create(as, webhooks.NewWebhook{URL: rc.URL + "/other", Events: []string{webhooks.RunFailed}})
	if err != nil {
		t.Fatal(err)
	}
	start := clk.Now()
	sc, err := h.Schedules.Create(as, s.ID, carryon.NewSchedule{Every: "1m", Message: "check the inbox"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		clk.Set(start.Add(time.Duration(i) * time.Minute))
		if n := tick(t, h); n != 1 {
			t.Fatalf("tick %d fired %d runs, want 1", i, n)
		}
		if n := tick(t, h); n != 0 {
			t.Fatalf("tick %d fired again: %d", i, n)
		}
		poll.Eventually(t, "the tick's delivery", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= i })
		settled(t, h, as, s.ID)
	}
	rs := runs(t, h, as, s.ID) // newest first
	if len(rs) != 3 {
		t.Fatalf("%d runs, want 3", len(rs))
	}
	poll.Eventually(t, "every delivery logged as delivered", func() bool {
		page, err := h.Webhooks.Deliveries(as, hook.ID, "", 0)
		if err != nil || len(page.Items) != 3 {
			return false
		}
		for _, d := range page.Items {
			if d.Status != "delivered" {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("%d deliveries, want one per tick: %v", len(got), got)
	}
	seen := map[string]bool{}
	for i, p := range got {
		tk := start.Add(time.Duration(i+1) * time.Minute)
		run := rs[2-i]
		d, _ := p["data"].(map[string]any)
		want := map[string]any{"schedule_id": sc.ID, "tick": tk.UTC().Format(time.RFC3339Nano), "run_id": run.ID, "session_id": s.ID}
		if p["type"] != webhooks.ScheduleFired || len(d) != len(want) {
			t.Fatalf("delivery %d = %v", i, p)
		}
		for k, v := range want {
			if d[k] != v {
				t.Fatalf("delivery %d: data.%s = %v, want %v (%v)", i, k, d[k], v, p)
			}
		}
		if wantID := "evt_" + sc.ID + "_" + itoa(tk.UnixMicro()); ids[i] != wantID || seen[ids[i]] {
			t.Fatalf("delivery %d webhook-id %q, want %q once", i, ids[i], wantID)
		}
		seen[ids[i]] = true
	}
	if page, err := h.Webhooks.Deliveries(as, other.ID, "", 0); err != nil || len(page.Items) != 0 {
		t.Fatalf("the run.failed webhook's log: %v %v", page, err)
	}
}
