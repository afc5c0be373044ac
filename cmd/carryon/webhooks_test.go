package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/carryon-hub/carryon/internal/npmtest"
	"github.com/carryon-hub/carryon/internal/poll"
)

// nodeReceiver is testdata/webhooks/receiver.mjs running: a receiver that verifies every
// delivery with the standardwebhooks npm package.
type nodeReceiver struct {
	url    string
	mu     sync.Mutex
	seen   []map[string]string // the verified deliveries, in arrival order
	bad    []string
	stderr *bytes.Buffer
}

func startNodeReceiver(t *testing.T) *nodeReceiver {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		npmtest.Missing(t, "node is not on PATH")
	}
	module := npmtest.File(t, "standardwebhooks/dist/index.js")
	cmd := exec.Command("node", filepath.Join("testdata", "webhooks", "receiver.mjs"), module)
	cmd.Env = os.Environ()
	rc := &nodeReceiver{stderr: &bytes.Buffer{}}
	cmd.Stderr = rc.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		t.Fatalf("the receiver did not start: %s", rc.stderr)
	}
	var first struct{ Port int }
	if err := json.Unmarshal(sc.Bytes(), &first); err != nil || first.Port == 0 {
		t.Fatalf("the receiver printed %q: %v", sc.Text(), err)
	}
	rc.url = fmt.Sprintf("http://127.0.0.1:%d", first.Port)
	go func() {
		for sc.Scan() {
			var m map[string]string
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			rc.mu.Lock()
			if m["bad"] != "" {
				rc.bad = append(rc.bad, m["bad"])
			} else {
				rc.seen = append(rc.seen, m)
			}
			rc.mu.Unlock()
		}
	}()
	return rc
}

func (rc *nodeReceiver) control(t *testing.T, path, body string) {
	t.Helper()
	res, err := http.Post(rc.url+path, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// distinct returns the verified deliveries by webhook-id (the dedupe key) and how many came.
func (rc *nodeReceiver) distinct() (map[string]map[string]string, int, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	by := map[string]map[string]string{}
	for _, m := range rc.seen {
		by[m["id"]] = m
	}
	return by, len(rc.seen), append([]string(nil), rc.bad...)
}

// TestWebhooksNodeReceiver drives a real server and a Node receiver that verifies with the
// standardwebhooks package: events of runs that end while the receiver is down are delivered
// once it is up, also across a SIGKILL of the server between the commit that queued them and
// their delivery; after dedupe by webhook-id each run's event arrives exactly once. The secret
// appears in no log and no later answer.
func TestWebhooksNodeReceiver(t *testing.T) {
	rc := startNodeReceiver(t)
	data := t.TempDir()
	flags := []string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-min-backoff", "50ms", "--webhook-max-backoff", "200ms"}
	srv := startServer(t, data, flags...)
	key := localKey(t, data)

	created := must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": rc.url + "/hook", "events": []string{"run.completed", "run.failed"}}, http.StatusCreated).json(t)
	secret, _ := created["secret"].(string)
	hookID, _ := created["id"].(string)
	if !strings.HasPrefix(secret, "whsec_") || hookID == "" {
		t.Fatalf("create answered %v", created)
	}
	rc.control(t, "/_secret", secret)
	rc.control(t, "/_down", "")

	var runs []string
	for i := range 3 {
		res := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": fmt.Sprintf("hello %d", i)}, http.StatusOK).json(t)
		runs = append(runs, res["run_id"].(string))
	}
	// Every event queued, and tried against the receiver that is down.
	poll.Eventually(t, "three deliveries tried", func() bool {
		r, err := do(srv.url, key, "GET", "/v1/webhooks/"+hookID+"/deliveries", nil)
		if err != nil || r.status != http.StatusOK {
			return false
		}
		var page struct {
			Items []struct {
				Status       string
				Attempts     int
				ResponseCode int `json:"response_code"`
			}
		}
		json.Unmarshal(r.body, &page)
		if len(page.Items) != 3 {
			return false
		}
		for _, d := range page.Items {
			if d.Status != "pending" || d.Attempts == 0 || d.ResponseCode != 503 {
				return false
			}
		}
		return true
	})
	logs := srv.logs.String()
	srv.kill() // between the commit and the delivery

	rc.control(t, "/_up", "")
	srv = startServer(t, data, flags...)
	res := must(t, srv.url, key, "POST", "/v1/chat", map[string]any{"message": "after the crash"}, http.StatusOK).json(t)
	runs = append(runs, res["run_id"].(string))

	poll.Eventually(t, "every run's event delivered", func() bool { by, _, _ := rc.distinct(); return len(by) >= len(runs) })
	by, total, bad := rc.distinct()
	if len(bad) != 0 {
		t.Fatalf("deliveries failed verification: %v", bad)
	}
	if len(by) != len(runs) || total < len(runs) {
		t.Fatalf("%d distinct deliveries (%d in all) for %d runs: %v", len(by), total, len(runs), by)
	}
	got := map[string]bool{}
	for id, m := range by {
		if m["type"] != "run.completed" || m["status"] != "succeeded" || !strings.HasPrefix(id, "evt_"+m["run_id"]+"_") {
			t.Errorf("delivery %s: %v", id, m)
		}
		got[m["run_id"]] = true
	}
	for _, r := range runs {
		if !got[r] {
			t.Errorf("run %s: no event delivered", r)
		}
	}
	poll.Eventually(t, "the log says delivered", func() bool {
		r, err := do(srv.url, key, "GET", "/v1/webhooks/"+hookID+"/deliveries", nil)
		return err == nil && r.status == http.StatusOK && strings.Count(string(r.body), `"status":"delivered"`) == len(runs)
	})
	got1 := must(t, srv.url, key, "GET", "/v1/webhooks/"+hookID, nil, http.StatusOK)
	list := must(t, srv.url, key, "GET", "/v1/webhooks", nil, http.StatusOK)
	for what, text := range map[string]string{"first server's logs": logs, "second server's logs": srv.logs.String(), "get": string(got1.body), "list": string(list.body)} {
		if strings.Contains(text, strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("the secret is in the %s", what)
		}
	}
}

// TestWebhooksRefuseLoopbackAtCreate: without --webhook-allow-private, a URL whose name
// resolves to 127.0.0.1 is refused with 400 at create, and so is plain http without
// --webhook-allow-http; an unknown event is 400 and another user's webhook 404.
func TestWebhooksRefuseLoopbackAtCreate(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, data, "--webhook-allow-http")
	key := localKey(t, data)
	r := must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": "http://localhost:9/hook", "events": []string{"run.completed"}}, http.StatusBadRequest)
	if !strings.Contains(string(r.body), "127.0.0.1") && !strings.Contains(string(r.body), "::1") {
		t.Errorf("refusal %s does not name the address", r.body)
	}
	must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": "http://169.254.169.254/latest", "events": []string{"run.completed"}}, http.StatusBadRequest)
	must(t, srv.url, key, "POST", "/v1/webhooks", map[string]any{"url": "https://example.com/hook", "events": []string{"run.exploded"}}, http.StatusBadRequest)
	must(t, srv.url, key, "GET", "/v1/webhooks/wh_nope", nil, http.StatusNotFound)
	if l := must(t, srv.url, key, "GET", "/v1/webhooks", nil, http.StatusOK); !strings.Contains(string(l.body), `"items":[]`) {
		t.Errorf("a refused create stored something: %s", l.body)
	}

	strict := startServer(t, t.TempDir())
	r = must(t, strict.url, localKey(t, strict.data), "POST", "/v1/webhooks", map[string]any{"url": "http://example.com/hook", "events": []string{"run.completed"}}, http.StatusBadRequest)
	if !strings.Contains(string(r.body), "https") {
		t.Errorf("refusal %s does not say https", r.body)
	}
}

// goReceiver is an httptest receiver that verifies with the Standard Webhooks Go library.
type goReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	secret string
	got    []map[string]any // verified deliveries: webhook-id, type, run_id, event_seq
	bad    int
}

func newGoReceiver(t *testing.T) *goReceiver {
	rc := &goReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(rc.secret)
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		var p struct {
			Type string
			Data struct {
				RunID    string `json:"run_id"`
				EventSeq int64  `json:"event_seq"`
			}
		}
		if err == nil {
			err = json.Unmarshal(body, &p)
		}
		if err != nil {
			rc.bad++
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		rc.got = append(rc.got, map[string]any{"id": r.Header.Get("webhook-id"), "type": p.Type, "run_id": p.Data.RunID, "seq": p.Data.EventSeq})
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// TestWebhooksTwoInstancesPostgres: two servers on one PostgreSQL share the outbox. Runs with a
// client tool stop in requires_action and complete after their outputs, on either instance;
// each of the two events of every run is delivered exactly once (the claims of the two workers
// skip each other's rows), verified with the Go library, the requires_action one with the lower
// event_seq; /metrics counts the attempts and shows the outbox empty.
func TestWebhooksTwoInstancesPostgres(t *testing.T) {
	dsn := pgDatabase(t)
	m := newWeatherModel(t)
	env := []string{"OPENAI_BASE_URL=" + m.URL + "/v1", "OPENAI_API_KEY=sk-test"}
	args := []string{"--db", dsn, "--provider", "openai", "--model", "gpt-test", "--webhook-allow-http", "--webhook-allow-private"}
	data := t.TempDir()
	a := startServerEnv(t, data, env, args...)
	b := startServerEnv(t, data, env, args...)
	key := localKey(t, data)
	rc := newGoReceiver(t)
	hook := must(t, a.url, key, "POST", "/v1/webhooks", map[string]any{"url": rc.URL + "/hook", "events": []string{"run.requires_action", "run.completed"}}, http.StatusCreated).json(t)
	rc.mu.Lock()
	rc.secret = hook["secret"].(string)
	rc.mu.Unlock()

	tools := []any{map[string]any{"name": "get_weather", "description": "The weather in a city.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	outputs := map[string]any{"outputs": []any{map[string]any{"call_id": "call_w", "output": "sunny"}}}
	var runs []string
	for i := range 6 {
		on, other := a, b
		if i%2 == 1 {
			on, other = b, a
		}
		sid := must(t, on.url, key, "POST", "/v1/sessions", map[string]any{}, 201).json(t)["id"].(string)
		id := must(t, on.url, key, "POST", "/v1/sessions/"+sid+"/runs", map[string]any{"message": "Weather?", "tools": tools}, 202).json(t)["id"].(string)
		if run := waitRun(t, on, key, id); run["status"] != "requires_action" {
			t.Fatalf("run %v, want requires_action", run)
		}
		must(t, other.url, key, "POST", "/v1/runs/"+id+"/tool_outputs", outputs, 200)
		if run := waitRun(t, other, key, id); run["status"] != "succeeded" {
			t.Fatalf("run %v, want succeeded", run)
		}
		runs = append(runs, id)
	}
	poll.Eventually(t, "both events of every run delivered", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.got) >= 2*len(runs)
	})
	// Let a duplicate, if the workers made one, arrive before counting: the outbox is empty
	// once every row is delivered.
	poll.Eventually(t, "the outbox is empty", func() bool {
		r, err := do(a.url, "", "GET", "/metrics", nil)
		return err == nil && strings.Contains(string(r.body), "carryon_webhook_outbox_depth 0")
	})
	rc.mu.Lock()
	got, bad := append([]map[string]any(nil), rc.got...), rc.bad
	rc.mu.Unlock()
	if bad != 0 || len(got) != 2*len(runs) {
		t.Fatalf("%d verified deliveries (%d bad), want exactly %d: %v", len(got), bad, 2*len(runs), got)
	}
	seqs := map[string]map[string]int64{}
	ids := map[string]bool{}
	for _, d := range got {
		ids[d["id"].(string)] = true
		run := d["run_id"].(string)
		if seqs[run] == nil {
			seqs[run] = map[string]int64{}
		}
		seqs[run][d["type"].(string)] = d["seq"].(int64)
	}
	if len(ids) != len(got) {
		t.Errorf("a webhook-id came twice: %v", got)
	}
	for _, r := range runs {
		s := seqs[r]
		if s["run.requires_action"] == 0 || s["run.completed"] <= s["run.requires_action"] {
			t.Errorf("run %s: event seqs %v", r, s)
		}
	}
	var delivered float64
	for _, srv := range []*server{a, b} {
		r := must(t, srv.url, "", "GET", "/metrics", nil, http.StatusOK)
		for _, l := range strings.Split(string(r.body), "\n") {
			if v, ok := strings.CutPrefix(l, `carryon_webhook_attempts_total{outcome="delivered"} `); ok {
				var n float64
				fmt.Sscan(v, &n)
				delivered += n
			}
		}
	}
	if delivered != float64(2*len(runs)) {
		t.Errorf("the instances counted %v delivered attempts, want %d", delivered, 2*len(runs))
	}
}
