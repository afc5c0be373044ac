package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRepeatEveryWrite: every write of every front door (the /v1 routes, the OpenAI-compatible
// routes, the MCP tools), sent with its key (Idempotency-Key, request_id), answers A; the same
// request again answers exactly A; after a kill -9 and a restart on the same data, the same
// request answers exactly A again; and what the write changed changed once. Each case makes its
// own target without a key, so that no later case touches it before the repeats after the
// restart. The /v1 cases are checked against the route table: a write route without a case,
// or a route that writes without taking a key and without a reason listed here, fails the test.
func TestRepeatEveryWrite(t *testing.T) {
	t.Parallel()
	testRepeatEveryWrite(t, nil)
}

// TestRepeatEveryWritePostgres is TestRepeatEveryWrite on PostgreSQL.
func TestRepeatEveryWritePostgres(t *testing.T) {
	t.Parallel()
	testRepeatEveryWrite(t, []string{"--db", pgDatabase(t)})
}

// repeatAgents are the profiles of the test's server: the scripted model, the same asking for
// approval before write_file (for a run that waits for a decision), and a slow one (for a run
// still going when its start is repeated).
const repeatAgents = `providers:
  offline: {kind: scripted}
  slow: {kind: scripted, delay: 300ms}
agents:
  default:
    provider: offline
  careful:
    provider: offline
    approval: {write_file: always}
  slow:
    provider: slow
`

// request is one write as a door takes it: an HTTP request (door "v1" or "compat") or an MCP
// tool call (door "mcp": path is the tool, body its arguments). key is the caller's API key;
// headers ("Name: value") go with an HTTP request, such as the If-Match of the version the target
// was at, which the first write moves on, so that a repeat that checked it before the request id
// would be refused.
type request struct {
	door, method, path string
	body               any
	key                string
	headers            []string
}

// answer is what a door answered, as compared: the status and the body (an MCP tool's
// structured content without the replayed flag, which says whether it is a repeat).
type answer struct {
	status int
	body   string
}

// repeatCase is one write of a door. prepare makes what the write needs (without a key), noting
// it in the case's target, and returns the request, once; settle, when set, waits until what the
// answer started is over (a run); state is what the write changed, which a repeat must leave as
// it was.
type repeatCase struct {
	name    string
	prepare func(x *target) request
	settle  func(x *target, a answer)
	state   func(x *target) string
}

// target is what a case made for its write and reads its state from: a session, a run, an item
// of another kind (a key, a conversation item), the key of a user of its own.
type target struct {
	id, run, item, user string
}

// repeatHub is the server the cases run against and how they reach it.
type repeatHub struct {
	t     *testing.T
	srv   *server
	args  []string
	admin string // the local user's key: an admin
	// versioned are the /v1 routes that take If-Match.
	versioned map[string]bool
	mcp       map[string]*mcp.ClientSession
}

func testRepeatEveryWrite(t *testing.T, db []string) {
	file := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(file, []byte(repeatAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &repeatHub{t: t, args: append([]string{"--agents", file}, db...)}
	h.srv = startServer(t, t.TempDir(), h.args...)
	h.admin = localKey(t, h.srv.data)
	cases := append(append(h.nativeCases(), h.compatCases()...), h.mcpCases()...)

	var firsts []*repeated
	for i, c := range cases {
		x := &target{}
		req := c.prepare(x)
		if req.door == "v1" && slices.ContainsFunc(req.headers, func(s string) bool { return strings.HasPrefix(s, "If-Match: ") }) {
			delete(h.versioned, strings.SplitN(c.name, " (", 2)[0])
		}
		d := &repeated{h: h, c: c, x: x, req: req,
			key: fmt.Sprintf("repeat-%d-%s", i, strings.NewReplacer(" ", "-", "/", "_", "{", "", "}", "").Replace(c.name))}
		if d.first = h.send(req, d.key); d.first.status/100 != 2 {
			t.Errorf("%s: %d %s", c.name, d.first.status, d.first.body)
			continue
		}
		// At once, while what the first started may still go on (a run), then once it is over.
		if a := h.send(req, d.key); a != d.first {
			t.Errorf("%s, repeated at once: %d %s\nthe first answer: %d %s", c.name, a.status, a.body, d.first.status, d.first.body)
		}
		if c.settle != nil {
			c.settle(x, d.first)
		}
		d.state = c.state(x)
		d.again("repeated")
		firsts = append(firsts, d)
	}
	for name, v := range h.versioned {
		if v {
			t.Errorf("%s takes If-Match, and no case of it sends one", name)
		}
	}
	h.restart()
	for _, d := range firsts {
		d.again("repeated after kill -9")
	}
}

// repeated is a case whose first request succeeded: its key, its first answer and the state it left.
type repeated struct {
	h          *repeatHub
	c          repeatCase
	x          *target
	req        request
	key, state string
	first      answer
}

// again sends the request again with its key: the answer must be the first, and the state as
// the first left it.
func (d *repeated) again(when string) {
	t := d.h.t
	t.Helper()
	a := d.h.send(d.req, d.key)
	if a != d.first {
		t.Errorf("%s, %s: %d %s\nthe first answer: %d %s", d.c.name, when, a.status, a.body, d.first.status, d.first.body)
	}
	if d.c.settle != nil && a.status/100 == 2 {
		d.c.settle(d.x, a)
	}
	if s := d.c.state(d.x); s != d.state {
		t.Errorf("%s, %s, wrote:\n%s\nbecame\n%s", d.c.name, when, d.state, s)
	}
}

// restart kills the server with SIGKILL and starts it again on the same data.
func (h *repeatHub) restart() {
	for _, cs := range h.mcp {
		cs.Close()
	}
	h.mcp = nil
	h.srv.kill()
	h.srv = startServer(h.t, h.srv.data, h.args...)
}

// send sends req with its key (key) through its door.
func (h *repeatHub) send(req request, key string) answer {
	h.t.Helper()
	switch req.door {
	case "mcp":
		args := map[string]any{}
		for k, v := range req.body.(map[string]any) {
			args[k] = v
		}
		args["request_id"] = key
		m, isErr := mcpTool(h.t, h.session(req.key), req.path, args)
		delete(m, "replayed")
		b, _ := json.Marshal(m)
		status := 200
		if isErr {
			status = 400
		}
		return answer{status, string(b)}
	case "compat":
		r := h.compat(req, withKey(req, key)...)
		return answer{r.status, string(r.body)}
	}
	r, err := do(h.srv.url, req.key, req.method, req.path, req.body, withKey(req, key)...)
	if err != nil {
		h.t.Fatal(err)
	}
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		return answer{r.status, stored(string(r.body))}
	}
	return answer{r.status, string(r.body)}
}

// stored is a run's event stream without its model.delta events and comments: a live stream
// sends a delta as a preview (no id) and skips its stored copy, a replay sends the stored copy
// (docs/API.md), so which of the two a stream holds varies; every other event is the same.
func stored(stream string) string {
	var keep []string
	for _, ev := range strings.Split(stream, "\n\n") {
		if !strings.Contains(ev, "event: model.delta\n") && !strings.HasPrefix(ev, ":") {
			keep = append(keep, ev)
		}
	}
	return strings.Join(keep, "\n\n")
}

// withKey is the headers of req and its Idempotency-Key.
func withKey(req request, key string) []string {
	return append(append([]string(nil), req.headers...), "Idempotency-Key: "+key)
}
