package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/tool/testtools"
)

// chaos is a cluster whose instances are killed and restarted under load.
type chaos struct {
	*cluster
	mu sync.Mutex
}

// url returns the address of a random instance (it may be down: clients retry elsewhere).
func (c *chaos) url() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.srvs[rand.IntN(len(c.srvs))].url
}

// send retries one request on random instances until one answers (a killed instance refuses
// connections), for at most a minute. A request whose id is still in flight (the instance that
// had it was killed while PostgreSQL still held its transaction) is retried as the API says, to
// get the first request's answer.
func (c *chaos) send(t *testing.T, method, path string, body any, headers ...string) response {
	var r response
	var err error
	if !within(time.Minute, func() bool {
		r, err = do(c.url(), c.key, method, path, body, headers...)
		return err == nil && r.status < 500 && !inFlight(r)
	}) {
		t.Errorf("%s %s: no instance answered: %v %v", method, path, err, r.status)
	}
	return r
}

// inFlight says whether r refuses a request because the same request id is still being processed.
func inFlight(r response) bool {
	return r.status == 409 && strings.Contains(string(r.body), `"code":"request_in_flight"`)
}

// TestChaosThreeInstances: three instances over one PostgreSQL database; 64 clients append with
// request ids and expected versions, and start runs, through random instances while one instance
// is SIGKILLed every two seconds and restarted. Afterwards: no acknowledged write lost, none
// applied twice, each client's appends in order, every run executed exactly once (a counting
// tool that would count a second execution).
func TestChaosThreeInstances(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts server processes under load")
	}
	ws := t.TempDir()
	args := []string{"--lease-ttl", "2s", "--workspaces", ws}
	c := &chaos{cluster: startCluster(t, 3, []string{"CARRYON_TEST_TOOLS=1"}, args, args, args)}
	const sessions, clients = 16, 64
	// Appends and runs go to different sessions: a run answers the last user message of its
	// session, so appends arriving during a run would be what it answers.
	sids := make([]string, sessions)
	runSids := make([]string, sessions/2)
	for i := range sids {
		sids[i] = c.send(t, "POST", "/v1/sessions", map[string]any{}).json(t)["id"].(string)
	}
	for i := range runSids {
		runSids[i] = c.send(t, "POST", "/v1/sessions", map[string]any{}).json(t)["id"].(string)
	}

	var mu sync.Mutex
	acked := make([][]int, clients) // per client, the acknowledged append numbers in order
	runsBy := map[string][]string{} // per session, the acknowledged run ids
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		sid, runSid := sids[i%sessions], runSids[i%len(runSids)]
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if n%8 == 7 { // a run that counts itself once
					r := c.send(t, "POST", "/v1/sessions/"+runSid+"/runs", map[string]any{
						"message": "/tool test_tally {}", "multitask": "enqueue", "request_id": fmt.Sprintf("run-%d-%d", i, n)})
					if r.status != 202 {
						t.Errorf("start run: %d %s", r.status, r.body)
						return
					}
					mu.Lock()
					runsBy[runSid] = append(runsBy[runSid], r.json(t)["id"].(string))
					mu.Unlock()
					continue
				}
				for attempt := 0; ; attempt++ {
					v := c.send(t, "GET", "/v1/sessions/"+sid+"?messages=0", nil).json(t)["version"]
					body := appendBody(fmt.Sprintf("c%d-%d", i, n), "expected_version", v, "request_id", fmt.Sprintf("a-%d-%d-%d", i, n, attempt))
					r := c.send(t, "POST", "/v1/sessions/"+sid+"/messages", body)
					if r.status == 201 {
						mu.Lock()
						acked[i] = append(acked[i], n)
						mu.Unlock()
						break
					}
					if r.status != 409 {
						t.Errorf("append: %d %s", r.status, r.body)
						return
					}
				}
			}
		})
	}
	killer := make(chan struct{})
	var kills atomic.Int32
	instances := int32(len(c.srvs))
	go func() {
		defer close(killer)
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
			i := k % len(c.srvs)
			c.mu.Lock()
			c.srvs[i].kill()
			c.mu.Unlock()
			kills.Add(1)
			time.Sleep(200 * time.Millisecond) // down a moment: the clients must go elsewhere
			c.mu.Lock()
			c.restart(i)
			c.mu.Unlock()
		}
	}()
	// The load goes on until every instance was killed at least once (and one twice), and as many
	// appends as there are clients and at least one run were acknowledged.
	progress := func() (appends, runs int) {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range acked {
			appends += len(a)
		}
		for _, ids := range runsBy {
			runs += len(ids)
		}
		return appends, runs
	}
	if !within(3*time.Minute, func() bool {
		appends, runs := progress()
		return kills.Load() > instances && appends >= clients && runs > 0
	}) {
		appends, runs := progress()
		t.Errorf("after three minutes: %d kills, %d appends and %d runs acknowledged", kills.Load(), appends, runs)
	}
	close(stop)
	wg.Wait()
	<-killer

	// Every acknowledged run finishes, and counted exactly once.
	total := 0
	for sid, ids := range runsBy {
		for _, id := range ids {
			if run := waitRun(t, c.srvs[0], c.key, id); run["status"] != "succeeded" {
				t.Fatalf("run %s: %v", id, run)
			}
		}
		tally, _ := testtools.ReadLines(filepath.Join(ws, sid, testtools.TallyFile))
		seen := map[string]int{}
		for _, line := range tally {
			seen[strings.SplitN(line, "/", 2)[0]]++
		}
		for _, id := range ids {
			if seen[id] != 1 {
				run := must(t, c.srvs[0].url, c.key, "GET", "/v1/runs/"+id, nil, 200).body
				acts := must(t, c.srvs[0].url, c.key, "GET", "/v1/runs/"+id+"/actions", nil, 200).body
				msgs := must(t, c.srvs[0].url, c.key, "GET", "/v1/sessions/"+sid+"/messages?limit=1000", nil, 200).json(t)["items"].([]any)
				var hist []string
				for _, m := range msgs {
					m := m.(map[string]any)
					hist = append(hist, fmt.Sprintf("%v %v %v %.60v", m["seq"], m["role"], m["run_id"], m["content"]))
				}
				t.Errorf("run %s counted %d times\nrun %s\nactions %s\nhistory:\n%s", id, seen[id], run, acts, strings.Join(hist, "\n"))
			}
		}
		if len(tally) != len(ids) {
			t.Errorf("session %s: %d counts for %d runs", sid, len(tally), len(ids))
		}
		listed := must(t, c.srvs[0].url, c.key, "GET", "/v1/sessions/"+sid+"/runs?limit=1000", nil, 200).json(t)["items"].([]any)
		if len(listed) != len(ids) {
			t.Errorf("session %s has %d runs, %d were started", sid, len(listed), len(ids))
		}
		total += len(ids)
	}
	// Every acknowledged append is stored once, each client's in order.
	count := map[string]int{}
	last := map[int]int{}
	for _, sid := range sids {
		for after := "0"; ; {
			page := must(t, c.srvs[0].url, c.key, "GET", "/v1/sessions/"+sid+"/messages?limit=1000&after_seq="+after, nil, 200).json(t)
			for _, m := range page["items"].([]any) {
				content := m.(map[string]any)["content"].(string)
				var ci, n int
				if _, err := fmt.Sscanf(content, "c%d-%d", &ci, &n); err != nil || m.(map[string]any)["role"] != "user" {
					continue
				}
				count[content]++
				if p, ok := last[ci]; ok && n <= p {
					t.Errorf("client %d: c%d-%d stored after c%d-%d", ci, ci, n, ci, p)
				}
				last[ci] = n
			}
			next, _ := page["next_cursor"].(string)
			if next == "" {
				break
			}
			after = next
		}
	}
	appends := 0
	for i := range clients {
		for _, n := range acked[i] {
			appends++
			if k := count[fmt.Sprintf("c%d-%d", i, n)]; k != 1 {
				t.Errorf("acknowledged c%d-%d stored %d times", i, n, k)
			}
		}
	}
	for content, k := range count {
		if k != 1 {
			t.Errorf("%s stored %d times", content, k)
		}
	}
	if appends < clients || total == 0 {
		t.Fatalf("too little got through: %d appends, %d runs", appends, total)
	}
	t.Logf("%d appends and %d runs acknowledged across instance kills", appends, total)
}
