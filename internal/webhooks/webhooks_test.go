package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/webhooks"
	"github.com/carryon-hub/carryon/store/postgres"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// open returns a SQLite store in a temporary file with users alice and bob.
func open(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/carryon.db")
	if err != nil {
		t.Fatal(err)
	}
	return withUsers(t, st)
}

// openPostgres returns a store on a fresh PostgreSQL database with users alice and bob.
func openPostgres(t *testing.T) store.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	return withUsers(t, st)
}

// stores are the stores a test runs on: SQLite, and PostgreSQL when the tests have one.
func stores(t *testing.T) map[string]func(*testing.T) store.Store {
	out := map[string]func(*testing.T) store.Store{"sqlite": open}
	if pgtest.Enabled() {
		out["postgres"] = openPostgres
	} else {
		t.Log("PostgreSQL not configured: set " + pgtest.EnvURL + " to check it too")
	}
	return out
}

// withUsers adds users alice and bob to st, which is closed when the test ends.
func withUsers(t *testing.T, st store.Store) store.Store {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	err := st.Write(t.Context(), func(ctx context.Context, tx store.Tx) error {
		for _, name := range []string{"alice", "bob"} {
			if err := tx.InsertUser(ctx, &carryon.User{ID: "usr_" + name, Name: name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func as(ctx context.Context, name string) context.Context {
	return carryon.NewContextWithUser(ctx, &carryon.User{ID: "usr_" + name, Name: name})
}

// receiver is a real HTTP server that verifies every delivery with the Standard Webhooks Go
// library and records the verified ones; while down it answers 503.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	secret   string
	got      []string // webhook-id of every verified delivery, in arrival order
	bodies   map[string]webhooks.Payload
	bad      int
	down     atomic.Bool
	requests atomic.Int64
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{bodies: map[string]webhooks.Payload{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.requests.Add(1)
		if rc.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(rc.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		if err != nil {
			rc.bad++
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var p webhooks.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			rc.bad++
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := r.Header.Get("webhook-id")
		rc.got = append(rc.got, id)
		rc.bodies[id] = p
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) verified() (ids []string, bad int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.got...), rc.bad
}

var open_ = webhooks.Policy{AllowHTTP: true, AllowPrivate: true}

// enqueue stores the event of a run of alice's session sess moving to status, as the run
// manager does in the transaction that moves it.
func enqueue(t *testing.T, st store.Store, sess string, n int, status carryon.RunStatus) string {
	t.Helper()
	run := &carryon.Run{ID: fmt.Sprintf("run_%s_%d", sess, n), SessionID: sess, OwnerID: "usr_alice", Status: status}
	ev, ok := webhooks.RunEvent(run, int64(n), time.Now())
	if !ok {
		t.Fatalf("no event for status %s", status)
	}
	err := st.Write(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetSession(ctx, "usr_alice", sess); carryon.ErrorCode(err) == carryon.ENOTFOUND {
			now := time.Now().UTC().Truncate(time.Microsecond)
			err = tx.InsertSession(ctx, &carryon.Session{ID: sess, OwnerID: "usr_alice", Status: carryon.SessionActive, Version: 1,
				CreatedAt: now, UpdatedAt: now, LastActiveAt: now, ExpiresAt: now.Add(time.Hour), IdleTTLSeconds: 3600})
			if err != nil {
				return err
			}
		}
		_, err := tx.EnqueueWebhookEvent(ctx, ev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

func startWorker(t *testing.T, st store.Store, cfg webhooks.WorkerConfig) *webhooks.Worker {
	t.Helper()
	w := webhooks.NewWorker(st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func TestDeliveredSignedAndVerified(t *testing.T) {
	st := open(t)
	rc := newReceiver(t)
	svc := webhooks.NewService(st, open_, nil, nil)
	ctx := as(t.Context(), "alice")
	hook, err := svc.Create(ctx, webhooks.NewWebhook{URL: rc.srv.URL + "/hook", Events: []string{webhooks.RunCompleted, webhooks.RunRequiresAction}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hook.Secret, "whsec_") {
		t.Fatalf("secret %q, want whsec_…", hook.Secret)
	}
	rc.secret = hook.Secret
	// The secret is shown once: never again in a read.
	got, err := svc.Get(ctx, hook.ID)
	if err != nil || got.Secret != "" {
		t.Fatalf("get: %+v %v, want no secret", got, err)
	}
	list, err := svc.List(ctx)
	if err != nil || len(list.Items) != 1 || list.Items[0].Secret != "" {
		t.Fatalf("list: %+v %v", list, err)
	}

	done := enqueue(t, st, "sess_a", 1, carryon.RunSucceeded)
	enqueue(t, st, "sess_a", 2, carryon.RunFailed) // not subscribed: never queued
	waits := enqueue(t, st, "sess_a", 3, carryon.RunRequiresAction)
	startWorker(t, st, webhooks.WorkerConfig{Policy: open_, Interval: 20 * time.Millisecond})
	poll.Eventually(t, "both events delivered", func() bool { ids, _ := rc.verified(); return len(ids) >= 2 })
	ids, bad := rc.verified()
	if bad != 0 || len(ids) != 2 || !(ids[0] == done && ids[1] == waits || ids[0] == waits && ids[1] == done) {
		t.Fatalf("verified %v (%d bad), want %s and %s", ids, bad, done, waits)
	}
	rc.mu.Lock()
	p := rc.bodies[done]
	rc.mu.Unlock()
	if p.Type != webhooks.RunCompleted || p.Data.RunID != "run_sess_a_1" || p.Data.Status != carryon.RunSucceeded || p.Data.EventSeq != 1 {
		t.Errorf("payload %+v", p)
	}
	var page *webhooks.DeliveryPage
	poll.Eventually(t, "the log says delivered", func() bool {
		page, err = svc.Deliveries(ctx, hook.ID, "", 0)
		return err == nil && len(page.Items) == 2 && page.Items[0].Status == "delivered" && page.Items[1].Status == "delivered"
	})
	for _, d := range page.Items {
		if d.Attempts != 1 || d.ResponseCode != 204 || d.LastError != "" || d.DeliveredAt == nil {
			t.Errorf("delivery %+v", d)
		}
	}

	// Redeliver: the same webhook-id again.
	if _, err := svc.Redeliver(ctx, hook.ID, page.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(t, "redelivered", func() bool { ids, _ := rc.verified(); return len(ids) == 3 })
	ids, _ = rc.verified()
	if ids[2] != page.Items[0].EventID {
		t.Errorf("redelivery came with id %s, want %s", ids[2], page.Items[0].EventID)
	}

	// Rotation: both secrets sign for a while, so a receiver with either accepts.
	rot, err := svc.Rotate(ctx, hook.ID, webhooks.Rotate{})
	if err != nil || rot.Secret == "" || rot.Secret == hook.Secret || rot.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotate: %+v %v", rot, err)
	}
	before := len(ids)
	enqueue(t, st, "sess_a", 4, carryon.RunSucceeded) // verified with the old secret
	poll.Eventually(t, "delivered after rotation, old secret", func() bool { ids, _ := rc.verified(); return len(ids) == before+1 })
	rc.mu.Lock()
	rc.secret = rot.Secret
	rc.mu.Unlock()
	enqueue(t, st, "sess_a", 5, carryon.RunSucceeded) // and with the new one
	poll.Eventually(t, "delivered after rotation, new secret", func() bool { ids, _ := rc.verified(); return len(ids) == before+2 })
	if _, bad := rc.verified(); bad != 0 {
		t.Errorf("%d deliveries failed verification", bad)
	}
}

func TestReceiverDownThenUp(t *testing.T) {
	st := open(t)
	rc := newReceiver(t)
	rc.down.Store(true)
	svc := webhooks.NewService(st, open_, nil, nil)
	ctx := as(t.Context(), "alice")
	hook, err := svc.Create(ctx, webhooks.NewWebhook{URL: rc.srv.URL, Events: webhooks.EventTypes})
	if err != nil {
		t.Fatal(err)
	}
	rc.secret = hook.Secret
	want := map[string]bool{}
	for i := 1; i <= 20; i++ {
		want[enqueue(t, st, fmt.Sprintf("sess_%d", i%3), i, carryon.RunSucceeded)] = true
	}
	startWorker(t, st, webhooks.WorkerConfig{Policy: open_, Interval: 10 * time.Millisecond,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, RetryFor: time.Minute})
	poll.Eventually(t, "the receiver was tried while down", func() bool { return rc.requests.Load() >= 40 })
	rc.down.Store(false)
	poll.Eventually(t, "every event delivered", func() bool {
		ids, _ := rc.verified()
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		return len(seen) == len(want)
	})
	ids, bad := rc.verified()
	seen := map[string]bool{}
	for _, id := range ids {
		if !want[id] {
			t.Errorf("delivered %s, which no run made", id)
		}
		seen[id] = true
	}
	if bad != 0 || len(seen) != len(want) {
		t.Fatalf("%d distinct of %d, %d bad", len(seen), len(want), bad)
	}
	// The receiver has them all; the worker stores each outcome just after its answer.
	var page *webhooks.DeliveryPage
	poll.Eventually(t, "the log says delivered", func() bool {
		var err error
		page, err = svc.Deliveries(ctx, hook.ID, "", 0)
		if err != nil || len(page.Items) != len(want) {
			return false
		}
		for _, d := range page.Items {
			if d.Status != "delivered" {
				return false
			}
		}
		return true
	})
	retried := 0
	for _, d := range page.Items {
		if d.Attempts > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no delivery was retried")
	}
}

func TestRetriesEndFailed(t *testing.T) {
	st := open(t)
	rc := newReceiver(t)
	rc.down.Store(true)
	svc := webhooks.NewService(st, open_, nil, nil)
	ctx := as(t.Context(), "alice")
	hook, err := svc.Create(ctx, webhooks.NewWebhook{URL: rc.srv.URL, Events: []string{webhooks.RunFailed}})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, "sess_x", 1, carryon.RunFailed)
	startWorker(t, st, webhooks.WorkerConfig{Policy: open_, Interval: 10 * time.Millisecond,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, RetryFor: 200 * time.Millisecond})
	var d *webhooks.Delivery
	poll.Eventually(t, "the delivery failed for good", func() bool {
		page, err := svc.Deliveries(ctx, hook.ID, "", 0)
		if err != nil || len(page.Items) != 1 {
			return false
		}
		d = page.Items[0]
		return d.Status == "failed"
	})
	if d.Attempts < 2 || d.ResponseCode != 503 || !strings.Contains(d.LastError, "503") || d.NextAttemptAt != nil {
		t.Errorf("failed delivery %+v", d)
	}
}

func TestRefusedAddresses(t *testing.T) {
	st := open(t)
	rc := newReceiver(t)
	ctx := as(t.Context(), "alice")
	strict := webhooks.NewService(st, webhooks.Policy{AllowHTTP: true}, nil, nil)
	port := rc.srv.URL[strings.LastIndex(rc.srv.URL, ":"):]
	for _, u := range []string{
		"http://localhost" + port + "/hook", // a name that resolves to 127.0.0.1
		rc.srv.URL,
		"http://[::1]" + port,
		"http://169.254.169.254/latest/meta-data",
		"http://10.1.2.3/x", "http://192.168.1.1/x", "http://100.64.0.1/x", "http://0.0.0.0/x",
		"ftp://example.com/x", "not a url", "",
		"http://user:pw@example.com/x",
	} {
		_, err := strict.Create(ctx, webhooks.NewWebhook{URL: u, Events: []string{webhooks.RunCompleted}})
		if carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("create with %q: %v, want %s", u, err, carryon.EINVALID)
		}
	}
	httpsOnly := webhooks.NewService(st, webhooks.Policy{AllowPrivate: true}, nil, nil)
	if _, err := httpsOnly.Create(ctx, webhooks.NewWebhook{URL: rc.srv.URL, Events: []string{webhooks.RunCompleted}}); carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(carryon.ErrorMessage(err), "https") {
		t.Errorf("http URL on an https-only server: %v", err)
	}

	// Checked again at delivery: a webhook made while private addresses were allowed (or a name
	// that now resolves elsewhere) is refused on connecting.
	loose := webhooks.NewService(st, open_, nil, nil)
	hook, err := loose.Create(ctx, webhooks.NewWebhook{URL: "http://localhost" + port + "/hook", Events: []string{webhooks.RunCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, "sess_r", 1, carryon.RunSucceeded)
	startWorker(t, st, webhooks.WorkerConfig{Policy: webhooks.Policy{AllowHTTP: true}, Interval: 10 * time.Millisecond,
		MinBackoff: time.Hour})
	var d *webhooks.Delivery
	poll.Eventually(t, "the attempt refused", func() bool {
		page, err := loose.Deliveries(ctx, hook.ID, "", 0)
		if err != nil || len(page.Items) != 1 {
			return false
		}
		d = page.Items[0]
		return d.Attempts == 1
	})
	if !strings.Contains(d.LastError, "refused to connect to 127.0.0.1") || d.Status != "pending" {
		t.Errorf("delivery %+v, want refused to connect", d)
	}
	if n := rc.requests.Load(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

func TestOwnershipAndBadInput(t *testing.T) {
	st := open(t)
	svc := webhooks.NewService(st, open_, nil, nil)
	alice, bob := as(t.Context(), "alice"), as(t.Context(), "bob")
	hook, err := svc.Create(alice, webhooks.NewWebhook{URL: "https://example.com/h", Events: []string{webhooks.RunCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"get": func() error { _, err := svc.Get(bob, hook.ID); return err }(),
		"patch": func() error {
			p := true
			_, err := svc.Update(bob, hook.ID, webhooks.WebhookPatch{Paused: &p})
			return err
		}(),
		"rotate":     func() error { _, err := svc.Rotate(bob, hook.ID, webhooks.Rotate{}); return err }(),
		"deliveries": func() error { _, err := svc.Deliveries(bob, hook.ID, "", 0); return err }(),
		"delete":     svc.Delete(bob, hook.ID),
		"session": func() error {
			_, err := svc.Create(bob, webhooks.NewWebhook{URL: "https://example.com/h", Events: []string{webhooks.RunCompleted}, SessionID: "sess_nope"})
			return err
		}(),
	} {
		if carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Errorf("%s as bob: %v, want %s", what, err, carryon.ENOTFOUND)
		}
	}
	for _, events := range [][]string{nil, {"run.exploded"}, {webhooks.RunCompleted, webhooks.RunCompleted}} {
		if _, err := svc.Create(alice, webhooks.NewWebhook{URL: "https://example.com/h", Events: events}); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("events %v: %v, want %s", events, err, carryon.EINVALID)
		}
	}
	if l, err := svc.List(bob); err != nil || len(l.Items) != 0 {
		t.Errorf("bob lists %+v %v", l, err)
	}
	// Pausing stops new events from being queued.
	p := true
	if _, err := svc.Update(alice, hook.ID, webhooks.WebhookPatch{Paused: &p}); err != nil {
		t.Fatal(err)
	}
	enqueue(t, st, "sess_p", 1, carryon.RunSucceeded)
	if page, err := svc.Deliveries(alice, hook.ID, "", 0); err != nil || len(page.Items) != 0 {
		t.Errorf("a paused webhook got %+v %v", page, err)
	}
	if err := svc.Delete(alice, hook.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(alice, hook.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Errorf("deleted webhook: %v", err)
	}
}

// A receiver that hangs, one that redirects and one that answers a huge error: each attempt is
// bounded by the timeout, no redirect is followed, at most a few KiB of an answer is read, and
// the slow receiver does not hold up the others beyond its timeout.
func TestBoundedAttempts(t *testing.T) {
	st := open(t)
	ctx := as(t.Context(), "alice")
	svc := webhooks.NewService(st, open_, nil, nil)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	var followed atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Add(1) }))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/elsewhere", http.StatusFound))
	defer redirect.Close()
	var sent atomic.Int64
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 640 { // 40 MiB, if anyone reads it: more than the sockets buffer
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	hooks := map[string]string{}
	for name, u := range map[string]string{"hang": hang.URL, "redirect": redirect.URL, "huge": huge.URL} {
		h, err := svc.Create(ctx, webhooks.NewWebhook{URL: u, Events: []string{webhooks.RunCompleted}})
		if err != nil {
			t.Fatal(err)
		}
		hooks[name] = h.ID
	}
	enqueue(t, st, "sess_b", 1, carryon.RunSucceeded)
	startWorker(t, st, webhooks.WorkerConfig{Policy: open_, Interval: 10 * time.Millisecond, Timeout: 300 * time.Millisecond, MinBackoff: time.Hour})
	logOf := func(name string) *webhooks.Delivery {
		page, err := svc.Deliveries(ctx, hooks[name], "", 0)
		if err != nil || len(page.Items) != 1 {
			return nil
		}
		return page.Items[0]
	}
	poll.Eventually(t, "every receiver tried once", func() bool {
		for name := range hooks {
			if d := logOf(name); d == nil || d.Attempts != 1 {
				return false
			}
		}
		return true
	})
	if d := logOf("hang"); d.Status != "pending" || d.ResponseCode != 0 || !strings.Contains(strings.ToLower(d.LastError), "timeout") && !strings.Contains(d.LastError, "deadline") {
		t.Errorf("hanging receiver: %+v", d)
	}
	if d := logOf("redirect"); d.ResponseCode != http.StatusFound || !strings.Contains(d.LastError, "redirects are not followed") || followed.Load() != 0 {
		t.Errorf("redirect: %+v (followed %d times)", d, followed.Load())
	}
	d := logOf("huge")
	if d.ResponseCode != http.StatusInternalServerError || len(d.LastError) > 600 {
		t.Errorf("huge answer: code %d, last error of %d bytes", d.ResponseCode, len(d.LastError))
	}
	if n := sent.Load(); n >= 40<<20 {
		t.Errorf("the whole huge answer (%d bytes) was read", n)
	}
}
