package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestTwoInstancesOneWinner: two clients with the same expected version, through two instances
// over one database: exactly one wins, the other gets the conflict and stores nothing.
func TestTwoInstancesOneWinner(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2, nil)
	a, b := c.srvs[0], c.srvs[1]
	for round := range 10 {
		id := must(t, a.url, c.key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
		v := must(t, b.url, c.key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["version"]
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i, srv := range []*server{a, b} {
			wg.Go(func() {
				r, err := do(srv.url, c.key, "POST", "/v1/sessions/"+id+"/messages", appendBody("from "+srv.url, "expected_version", v))
				if err != nil {
					t.Error(err)
				}
				statuses[i] = r.status
			})
		}
		wg.Wait()
		if !(statuses[0] == 201 && statuses[1] == 409 || statuses[0] == 409 && statuses[1] == 201) {
			t.Fatalf("round %d: statuses %v, want one 201 and one 409", round, statuses)
		}
		if n := must(t, a.url, c.key, "GET", "/v1/sessions/"+id, nil, 200).json(t)["message_count"]; n != 1.0 {
			t.Fatalf("round %d: %v messages stored", round, n)
		}
	}
}

// sseEvent is one event of a stream.
type sseEvent struct {
	ID   string
	Type string
}

// readEvents reads SSE events from url until the run's last event, the stream's end, or until
// stop returns true after an event.
func readEvents(t *testing.T, url, key, lastID string, stop func(n int) bool) ([]sseEvent, bool) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case line == "" && cur.ID != "":
			out = append(out, cur)
			if cur.Type == "run.finished" || cur.Type == "run.failed" {
				return out, true
			}
			cur = sseEvent{}
			if stop != nil && stop(len(out)) {
				return out, false
			}
		}
	}
	return out, false
}

// TestStreamAcrossInstances: a client streams a run through instance A while it executes on
// instance B; A is killed; the client resumes through C with Last-Event-ID and misses and repeats
// nothing.
func TestStreamAcrossInstances(t *testing.T) {
	t.Parallel()
	env := []string{"CARRYON_SCRIPTED_DELAY=700ms"}
	c := startCluster(t, 3, env, []string{"--workers", "0"}, []string{"--workers", "4"}, []string{"--workers", "0"})
	a, b, cc := c.srvs[0], c.srvs[1], c.srvs[2]
	sid := must(t, a.url, c.key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	runID := must(t, a.url, c.key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Plan the launch: draft, then review, then publish"}, 202).json(t)["id"].(string)

	first, done := readEvents(t, a.url+"/v1/runs/"+runID+"/events", c.key, "", func(n int) bool { return n >= 3 })
	if done || len(first) < 3 {
		t.Fatalf("first part: %v (done %v)", first, done)
	}
	a.kill()
	rest, done := readEvents(t, cc.url+"/v1/runs/"+runID+"/events", c.key, first[len(first)-1].ID, nil)
	if !done {
		t.Fatalf("the stream through C ended before the run: %v", rest)
	}
	all, _ := readEvents(t, cc.url+"/v1/runs/"+runID+"/events", c.key, "", nil)
	got := append(first, rest...)
	if len(got) != len(all) {
		t.Fatalf("resumed stream has %d events, the run has %d", len(got), len(all))
	}
	for i := range all {
		if got[i] != all[i] {
			t.Fatalf("event %d: got %v, want %v", i, got[i], all[i])
		}
	}
	run := must(t, cc.url, c.key, "GET", "/v1/runs/"+runID, nil, 200).json(t)
	if run["status"] != "succeeded" || !strings.Contains(b.logs.String(), runID) {
		t.Fatalf("run %v did not execute on B", run["status"])
	}
}

// TestPausedInstanceIsFenced: instance A runs a run and is stopped with SIGSTOP; its lease
// expires, instance B takes the run over and finishes it; when A is continued, it either stops
// the run itself before its next effect (its heartbeat finds the lease ended unrenewed) or its
// writes are refused (run_fenced), and the session holds B's work only.
func TestPausedInstanceIsFenced(t *testing.T) {
	t.Parallel()
	env := []string{"CARRYON_SCRIPTED_DELAY=1500ms"}
	c := startCluster(t, 1, env, []string{"--lease-ttl", "1s"})
	a := c.srvs[0]
	sid := must(t, a.url, c.key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
	runID := must(t, a.url, c.key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Write the notes: outline, then draft"}, 202).json(t)["id"].(string)
	eventually(t, "the run to be running on A", func() bool {
		return must(t, a.url, c.key, "GET", "/v1/runs/"+runID, nil, 200).json(t)["status"] == "running"
	})
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.args = append(c.args, []string{"--lease-ttl", "5s"})
	c.srvs = append(c.srvs, c.start(1, t.TempDir()))
	b := c.srvs[1]
	run := waitRun(t, b, c.key, runID)
	if run["status"] != "succeeded" || run["attempt"] != 2.0 {
		t.Fatalf("run on B: %v", run)
	}
	before := must(t, b.url, c.key, "GET", "/v1/sessions/"+sid+"?messages=100", nil, 200).body
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !within(30*time.Second, func() bool {
		return strings.Contains(a.logs.String(), "run_fenced") || strings.Contains(a.logs.String(), "stopping the run before its next effect")
	}) {
		t.Fatalf("A neither stopped the run nor had its writes refused; its logs:\n%s", a.logs)
	}
	after := must(t, b.url, c.key, "GET", "/v1/sessions/"+sid+"?messages=100", nil, 200).body
	if string(before) != string(after) {
		t.Fatalf("A wrote after losing the run:\n%s\n%s", before, after)
	}
	var v struct {
		Messages []struct{ Role, Content string }
	}
	json.Unmarshal(after, &v)
	finals := 0
	for _, m := range v.Messages {
		if m.Role == "assistant" && m.Content != "" {
			finals++
		}
	}
	if finals != 1 {
		t.Fatalf("%d final answers in the session, want 1", finals)
	}
}
