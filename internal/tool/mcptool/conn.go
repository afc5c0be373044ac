package mcptool

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateGrace is how long a stdio server has to exit after its stdin is closed, and again
// after SIGTERM, before it is killed.
const terminateGrace = 2 * time.Second

// inheritedEnv are the variables of carryon's environment a stdio server inherits (where they are
// set), the same set the MCP TypeScript SDK passes by default: enough to find programs and a home
// directory, never carryon's keys and database URLs.
var inheritedEnv = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR", "TZ",
	// Windows
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT", "PROCESSOR_ARCHITECTURE",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE",
}

// InheritedEnv returns the names of the variables a stdio server inherits from carryon's
// environment when they are set; Config.Env adds to them and wins over them.
func InheritedEnv() []string { return slices.Clone(inheritedEnv) }

// session is one live connection to the server.
type session struct {
	cs      *mcp.ClientSession
	cmd     *exec.Cmd // the stdio server's process; nil otherwise
	stderr  *tail     // the stdio server's last stderr output; nil otherwise
	started time.Time
	done    chan struct{} // closed once the session is over (see Server.end)
	endOnce sync.Once
	// ctx ends when the session does, its cause saying why; the calls on the session end with it.
	ctx  context.Context
	stop context.CancelCauseFunc

	// Guarded by Server.mu (see health.go):
	probe    chan struct{} // while a ping checks the server after an unanswered call; closed after
	timeouts int           // calls in a row that timed out
}

// transport returns a new transport to the server, and the command it will start (stdio only).
func (s *Server) transport() (mcp.Transport, *exec.Cmd, *tail) {
	switch {
	case s.cfg.Transport != nil:
		return s.cfg.Transport(), nil, nil
	case s.cfg.URL != "":
		client := &http.Client{Transport: clippingTransport{base: headerTransport{base: http.DefaultTransport, headers: s.cfg.Headers}, log: s.log}}
		return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}, nil, nil
	}
	cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
	cmd.Dir = s.cfg.Dir
	cmd.Env = environ(s.cfg.Env)
	errs := &tail{log: s.log}
	cmd.Stderr = errs
	// A grandchild (npx starts node) may keep stderr open after the child is gone; do not wait for it.
	cmd.WaitDelay = terminateGrace
	ownProcessGroup(cmd)
	return &stdioTransport{cmd: cmd, grace: terminateGrace, log: s.log}, cmd, errs
}

// environ is the environment of a stdio server: the inherited variables that are set, then extra.
func environ(extra map[string]string) []string {
	env := map[string]string{}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	maps.Copy(env, extra)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// open starts (stdio) or reaches (HTTP) the server and initialises an MCP session with it.
func (s *Server) open(ctx context.Context) (*session, error) {
	t, cmd, errs := s.transport()
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		if cmd != nil && cmd.Process != nil {
			killProcessGroup(cmd)
		}
		return nil, fmt.Errorf("cannot start MCP server %q: %w%s", s.cfg.Name, describeCause(ctx, err), errs.note())
	}
	sctx, stop := context.WithCancelCause(context.Background())
	return &session{cs: cs, cmd: cmd, stderr: errs, started: time.Now(), done: make(chan struct{}), ctx: sctx, stop: stop}, nil
}

// describeCause names a timeout of ctx rather than the bare context error.
func describeCause(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no answer to initialize in time (%w)", err)
	}
	return err
}

// close ends the session: the calls on it end at once, then the connection is closed (stdin,
// then SIGTERM, then SIGKILL for a stdio server) and the process group is killed, so that no
// grandchild outlives it. With kill, for a server that stopped answering, the process group is
// killed first. It never blocks for more than a few terminateGrace periods.
func (ss *session) close(kill bool) {
	ss.endOnce.Do(func() {
		ss.stop(errClosed)
		if kill && ss.cmd != nil && ss.cmd.Process != nil {
			killProcessGroup(ss.cmd)
		}
		finished := make(chan struct{})
		go func() { _ = ss.cs.Close(); close(finished) }()
		select {
		case <-finished:
		case <-time.After(3 * terminateGrace):
		}
		if ss.cmd != nil && ss.cmd.Process != nil {
			killProcessGroup(ss.cmd)
		}
		close(ss.done)
	})
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) == 0 {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// tail keeps the end of a stdio server's stderr for error messages and logs each line at debug.
type tail struct {
	log  interface{ Debug(string, ...any) }
	mu   sync.Mutex
	buf  []byte
	line []byte
}

const tailBytes = 1 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = slices.Clone(t.buf[len(t.buf)-tailBytes:])
	}
	t.line = append(t.line, p...)
	for {
		i := slices.Index(t.line, '\n')
		if i < 0 {
			break
		}
		t.log.Debug("mcp server stderr", "line", string(t.line[:i]))
		t.line = t.line[i+1:]
	}
	if len(t.line) > tailBytes {
		t.line = nil
	}
	return len(p), nil
}

// note returns "; stderr: …" with the last lines the server wrote, or "".
func (t *tail) note() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
	if len(s) > tailBytes {
		s = s[len(s)-tailBytes:]
		s = strings.ToValidUTF8(s, "")
	}
	if s == "" {
		return ""
	}
	return "; its stderr ends with: " + s
}

// clippingTransport hands the SDK an HTTP server's answers as the stdio transport hands a
// process's: a message over MaxMessageBytes (a JSON body, or an event's data line in a stream)
// is never held whole, and an answer to a call becomes a clipped result that says how large it
// was (frameReader), so one oversize result fails no other call and costs no memory.
type clippingTransport struct {
	base http.RoundTripper
	log  *slog.Logger
}

func (c clippingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	var prefix []byte
	switch media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media {
	case "application/json":
	case "text/event-stream":
		prefix = []byte("data: ")
	default:
		return resp, nil
	}
	fr := newFrameReader(resp.Body, MaxMessageBytes, c.log)
	fr.prefix = prefix
	resp.Body = readCloser{fr, resp.Body}
	resp.ContentLength = -1 // a clipped body is shorter
	resp.Header.Del("Content-Length")
	return resp, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}
