package main

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// openEvents opens the event stream of run on the server at url as key and returns its status;
// a 200 stream stays open until the returned close is called.
func openEvents(t *testing.T, url, key, run string) (int, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url+"/v1/runs/"+run+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	closeIt := func() { res.Body.Close(); cancel() }
	if res.StatusCode != 200 {
		closeIt()
	}
	t.Cleanup(closeIt)
	return res.StatusCode, closeIt
}

// TestLimitsAcrossInstancesPostgres: two server processes on one PostgreSQL hold a user to its
// limits together, within the stated tolerance (each shares its counts once a second): the
// requests one instance took come out of the other's bucket of the user, and the streams open on
// one count on the other. An admin's limits set through one instance apply on the other.
func TestLimitsAcrossInstancesPostgres(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2, nil, []string{"--workers", "0"}, []string{"--workers", "0"})
	a, b := c.srvs[0].url, c.srvs[1].url
	heavy := must(t, a, c.key, "POST", "/v1/users", map[string]any{"name": "heavy"}, 201).json(t)["key"].(string)
	streamer := must(t, a, c.key, "POST", "/v1/users", map[string]any{"name": "streamer"}, 201).json(t)["key"].(string)
	// Ten requests, then one every 100 s: nothing comes back while the test runs.
	must(t, a, c.key, "PUT", "/v1/users/heavy/limits", map[string]any{"requests_per_second": 0.01, "request_burst": 10}, 200)
	must(t, b, c.key, "PUT", "/v1/users/streamer/limits", map[string]any{"max_streams": 2}, 200)

	served := 0
	for ; served < 20; served++ {
		r, err := do(a, heavy, "GET", "/v1/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status == 429 {
			break
		}
	}
	if served != 10 {
		t.Fatalf("instance a served %d requests of a burst of 10", served)
	}
	// Instance b has a full bucket of its own until it reads a's share (within about two seconds):
	// probed every 400 ms, it serves a few at most, and then refuses; alone it would serve ten.
	onB, last := 0, time.Time{}
	refused := within(10*time.Second, func() bool {
		if time.Since(last) < 400*time.Millisecond {
			return false
		}
		last = time.Now()
		r, err := do(b, heavy, "GET", "/v1/me", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status == 200 {
			onB++
		}
		if r.status == 429 && r.header.Get("RateLimit") == "" {
			t.Errorf("b's 429 has no RateLimit field")
		}
		return r.status == 429
	})
	if !refused || onB > 6 {
		t.Fatalf("instance b refused: %v, after serving %d more of heavy's requests (the tolerance: what b serves before a's share reaches it)", refused, onB)
	}

	// Streams: two open on a; b refuses a third once it has read a's share, and lets one in again
	// once one of them closed.
	sess := must(t, a, streamer, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	run := must(t, a, streamer, "POST", "/v1/sessions/"+sess+"/runs", map[string]any{"message": "stays queued: no instance has workers"}, 202).json(t)["id"].(string)
	var closers []func()
	for range 2 {
		status, closeIt := openEvents(t, a, streamer, run)
		if status != 200 {
			t.Fatalf("a stream within the limit on a: %d", status)
		}
		closers = append(closers, closeIt)
	}
	if !within(10*time.Second, func() bool {
		status, closeIt := openEvents(t, b, streamer, run)
		closeIt()
		return status == 429
	}) {
		t.Fatal("instance b kept opening streams past max_streams 2 with two open on a")
	}
	closers[0]()
	if !within(10*time.Second, func() bool {
		status, closeIt := openEvents(t, b, streamer, run)
		closeIt()
		return status == 200
	}) {
		t.Fatal("instance b did not let a stream in after one on a closed")
	}
}
