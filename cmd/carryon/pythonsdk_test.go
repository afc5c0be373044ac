package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon/internal/npmtest"
)

// python3WithHTTPX is a python3 that imports httpx (Debian's python3-httpx): the one on PATH, or
// the system's /usr/bin/python3 when the one on PATH (a pyenv, a venv) does not see Debian's
// packages; Missing otherwise.
func python3WithHTTPX(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if err := exec.Command(path, "-c", "import httpx").Run(); err == nil {
			return path
		}
		tried = append(tried, path)
	}
	npmtest.Missing(t, "no python3 with httpx (tried "+strings.Join(tried, ", ")+"): apt-get install -y python3-httpx")
	return ""
}

// sdkProxy stands between the Python SDK and a carryon server process, so that the server can be
// killed with SIGKILL and started again on the same data (on another port) while the SDK keeps
// one URL. It counts the requests of each Idempotency-Key, and answers the Python tests'
// controls under /_test/:
//
//   - POST /_test/restart: kill the server (SIGKILL) and start it again; answered once it serves.
//   - POST /_test/kill-after?path=P: the next write to path P reaches the server and is
//     committed, then the server is killed before its answer reaches the SDK (the connection is
//     cut), and started again in the background: the SDK sees a broken connection, then 502s
//     while the server is down, and retries.
//   - POST /_test/fail?path=P&n=N: the next N requests to path P are answered 429
//     too_many_requests with Retry-After: 1, before the server sees them.
//   - GET /_test/seen?key=K: {"requests": n}, the requests that carried Idempotency-Key K.
type sdkProxy struct {
	t    *testing.T
	data string
	env  []string
	args []string

	mu        sync.Mutex
	srv       *server // nil while it restarts
	killAfter string
	failPath  string
	failN     int
	seen      map[string]int
	restarts  int
}

func (p *sdkProxy) backend() *server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.srv
}

// down kills the server (SIGKILL); requests get 502 until start.
func (p *sdkProxy) down() {
	p.mu.Lock()
	old := p.srv
	p.srv = nil
	p.mu.Unlock()
	if old != nil {
		old.kill()
	}
}

// start starts the server again on the same data.
func (p *sdkProxy) start() {
	srv := startServerEnv(p.t, p.data, p.env, p.args...)
	p.mu.Lock()
	p.srv = srv
	p.restarts++
	p.mu.Unlock()
}

func (p *sdkProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/_test/restart":
		p.down()
		p.start()
		w.WriteHeader(204)
		return
	case "/_test/kill-after":
		p.mu.Lock()
		p.killAfter = r.URL.Query().Get("path")
		p.mu.Unlock()
		w.WriteHeader(204)
		return
	case "/_test/fail":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		p.mu.Lock()
		p.failPath, p.failN = r.URL.Query().Get("path"), n
		p.mu.Unlock()
		w.WriteHeader(204)
		return
	case "/_test/seen":
		p.mu.Lock()
		n, restarts := p.seen[r.URL.Query().Get("key")], p.restarts
		p.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]int{"requests": n, "restarts": restarts})
		return
	}
	p.mu.Lock()
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		p.seen[k]++
	}
	if p.failN > 0 && r.URL.Path == p.failPath {
		p.failN--
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"about:blank","title":"Too many requests","status":429,"code":"too_many_requests","detail":"injected by the test"}`)
		return
	}
	cut := r.Method != "GET" && p.killAfter != "" && r.URL.Path == p.killAfter
	if cut {
		p.killAfter = ""
	}
	srv := p.srv
	p.mu.Unlock()
	if srv == nil {
		http.Error(w, "carryon is restarting", http.StatusBadGateway)
		return
	}
	target, _ := url.Parse(srv.url)
	if !cut {
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.FlushInterval = -1
		rp.ErrorLog = log.New(io.Discard, "", 0) // a stream cut by a kill is the point, not news
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "carryon is not answering: "+err.Error(), http.StatusBadGateway)
		}
		rp.ServeHTTP(w, r)
		return
	}
	// The write reaches the server and its answer is read (so it is committed), then the server
	// dies and the SDK's connection is cut without an answer.
	out := r.Clone(r.Context())
	out.RequestURI, out.URL.Scheme, out.URL.Host, out.Host = "", target.Scheme, target.Host, target.Host
	res, err := http.DefaultTransport.RoundTrip(out)
	if err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	p.down()
	go p.start()
	panic(http.ErrAbortHandler)
}

// TestPythonSDK runs the Python SDK's tests (sdk/python/tests, `python3 -m unittest`) and its
// example of the seed's task against a real server process behind sdkProxy, on SQLite and, with
// CARRYON_TEST_POSTGRES_URL, on PostgreSQL: every helper, sync and async (the Idempotency-Key
// retries, the If-Match update, event streams resumed by Last-Event-ID, client tools, approvals,
// paging iterators, typed errors), and the kill -9 tests: a server killed mid-stream and started
// again on the same data, where the SDK's stream resumes with every event exactly once, and a
// write whose answer was lost in the kill, retried by the SDK with its key and applied once.
// Without a python3 that has httpx the test is skipped, or fails when CARRYON_TEST_REQUIRE_NPM=1.
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	py := python3WithHTTPX(t)
	sdk, err := filepath.Abs(filepath.Join("..", "..", "sdk", "python"))
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			var extra []string
			if store == "postgres" {
				extra = []string{"--db", pgDatabase(t)}
			}
			runPythonSDKTests(t, py, sdk, extra)
		})
	}
}

func runPythonSDKTests(t *testing.T, py, sdk string, extra []string) {
	m := newWeatherModel(t)
	file := filepath.Join(t.TempDir(), "agents.yaml")
	agents := `providers:
  offline: {kind: scripted, delay: 50ms}
  slowpoke: {kind: scripted, delay: 400ms}
  weather: {kind: openai, base_url: "` + m.URL + `/v1"}
agents:
  default: {provider: offline}
  careful:
    provider: offline
    approval: {write_file: always}
  slow: {provider: slowpoke}
  weather: {provider: weather, model: gpt-test}
`
	if err := os.WriteFile(file, []byte(agents), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	args := append([]string{"--agents", file, "--lease-ttl", "2s"}, extra...)
	p := &sdkProxy{t: t, data: data, args: args, seen: map[string]int{}}
	p.srv = startServerEnv(t, data, nil, args...)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	base := front.URL

	cmd := exec.Command(py, "-m", "unittest", "discover", "-v", "-s", "tests", "-t", ".")
	cmd.Dir = sdk
	cmd.Env = append(os.Environ(), "PYTHONPATH="+sdk, "PYTHONDONTWRITEBYTECODE=1",
		"CARRYON_URL="+base, "CARRYON_KEY="+localKey(t, data), "CARRYON_TEST_CONTROL="+base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		logs := ""
		if srv := p.backend(); srv != nil {
			logs = lastLines(srv.logs.String(), 40)
		}
		t.Fatalf("python3 -m unittest: %v\n%s\nthe server's last log lines:\n%s", err, out, logs)
	}
	t.Logf("python3 -m unittest:\n%s", out)
	if !strings.Contains(string(out), "OK") {
		t.Fatalf("the Python tests did not say OK:\n%s", out)
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
