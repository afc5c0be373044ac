package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCrashKeepsAcknowledgedAppends kills a real server with SIGKILL while 8 clients append with
// request ids, restarts it, retries what was not acknowledged, and checks the history: every
// acknowledged append exactly once, each client's appends in order, retried ones at most once.
func TestCrashKeepsAcknowledgedAppends(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes")
	}
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	sess := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "crash"}, 201).json(t)
	id := sess["id"].(string)

	const clients = 8
	acked := make([][]int, clients)           // per client, the acknowledged sequence numbers
	pending := make([]int, clients)           // per client, the request in flight at the crash (-1: none)
	progress := make([]atomic.Int64, clients) // per client, how many appends were acknowledged so far
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		pending[c] = -1
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				body := map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("c%d-%d", c, n)}}, "request_id": fmt.Sprintf("c%d-%d", c, n)}
				pending[c] = n
				r, err := do(srv.url, key, "POST", "/v1/sessions/"+id+"/messages", body)
				if err != nil {
					return // the server died under us: n may or may not have landed
				}
				if r.status != 201 {
					t.Errorf("append = %d: %s", r.status, r.body)
					return
				}
				acked[c] = append(acked[c], n)
				pending[c] = -1
				progress[c].Add(1)
			}
		})
	}
	// The crash comes once every client has had several appends acknowledged, while all of them
	// are still sending.
	if !within(time.Minute, func() bool {
		for c := range progress {
			if progress[c].Load() < 10 {
				return false
			}
		}
		return true
	}) {
		t.Error("after a minute, some client had fewer than 10 appends acknowledged")
	}
	srv.kill()
	close(stop)
	wg.Wait()

	srv = startServer(t, data)
	for c := range clients {
		if n := pending[c]; n >= 0 {
			body := map[string]any{"messages": []map[string]string{{"role": "user", "content": fmt.Sprintf("c%d-%d", c, n)}}, "request_id": fmt.Sprintf("c%d-%d", c, n)}
			must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", body, 201)
			acked[c] = append(acked[c], n)
		}
	}
	// Read the whole history back.
	seen := map[string]int{}
	last := make([]int, clients)
	for c := range last {
		last[c] = -1
	}
	total := 0
	for after := "0"; ; {
		page := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"/messages?limit=1000&after_seq="+after, nil, 200).json(t)
		for _, it := range page["items"].([]any) {
			content := it.(map[string]any)["content"].(string)
			seen[content]++
			var c, n int
			fmt.Sscanf(content, "c%d-%d", &c, &n)
			if n <= last[c] {
				t.Errorf("client %d: %s after c%d-%d", c, content, c, last[c])
			}
			last[c] = n
			total++
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		after = next
	}
	ackedCount := 0
	for c := range clients {
		for _, n := range acked[c] {
			ackedCount++
			if k := seen[fmt.Sprintf("c%d-%d", c, n)]; k != 1 {
				t.Errorf("acknowledged c%d-%d stored %d times", c, n, k)
			}
		}
	}
	for content, k := range seen {
		if k != 1 {
			t.Errorf("%s stored %d times", content, k)
		}
	}
	if ackedCount < clients {
		t.Fatalf("only %d appends were acknowledged before the crash", ackedCount)
	}
	if total != ackedCount {
		t.Errorf("history holds %d messages, %d acknowledged", total, ackedCount)
	}
	got := must(t, srv.url, key, "GET", "/v1/sessions/"+id+"?messages=0", nil, 200).json(t)
	if mc := got["message_count"].(float64); int(mc) != total || got["version"].(float64) != float64(total+1) {
		t.Errorf("session says %v messages at version %v; history has %d", mc, got["version"], total)
	}
	t.Logf("%d appends acknowledged across the crash", ackedCount)
}
