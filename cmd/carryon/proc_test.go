package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the carryon program built once for the tests that run real server processes.
var binary string

func TestMain(m *testing.M) {
	if os.Getenv(counterServerEnv) != "" {
		os.Exit(serveCounter())
	}
	dir, err := os.MkdirTemp("", "carryon-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "carryon")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build carryon: %v\n%s", err, out)
		os.Exit(1)
	}
	if err := checkAnswers(); err != nil {
		fmt.Fprintf(os.Stderr, "the OpenAPI document: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a carryon server process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	data string
	logs *lockedBuffer
}

// lockedBuffer collects a process's output; the test may read it while the process writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer runs `carryon serve` on a free port over the data directory and waits until it answers.
func startServer(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	return startServerEnv(t, data, nil, extra...)
}

// startServerEnv is startServer with extra environment variables ("NAME=value").
func startServerEnv(t *testing.T, data string, env []string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "CARRYON_LOG_JSON="), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, data: data, logs: logs}
	t.Cleanup(func() { s.kill() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		_, rest, ok := strings.Cut(line, "listening on ")
		if !ok {
			t.Fatalf("unexpected first line %q", line)
		}
		s.url, _, _ = strings.Cut(rest, " ")
		watchAnswers(t, strings.TrimPrefix(s.url, "http://"))
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start; logs:\n%s", logs)
	}
	return s
}

// kill stops the server with SIGKILL, as a crash would.
func (s *server) kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
	}
}

// localKey is the key of the local user that the server wrote into its data directory.
func localKey(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "local.key"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// response is a raw HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not JSON (%v): %s", err, r.body)
	}
	return m
}

// do sends one request; headers are "Name: value" strings.
func do(url, key, method, path string, body any, headers ...string) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		return response{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}, err
}

// must sends one request and fails the test unless the status is want.
func must(t *testing.T, url, key, method, path string, body any, want int, headers ...string) response {
	t.Helper()
	r, err := do(url, key, method, path, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}
