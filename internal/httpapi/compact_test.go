package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// summaryModel answers summary requests with a summary that names how many lines it was given
// and the first one, and keeps what it was asked; with fail set it fails instead.
type summaryModel struct {
	mu    sync.Mutex
	fail  bool
	calls int
	last  model.Request
}

func (m *summaryModel) Name() string { return "summaries" }

func (m *summaryModel) Stream(_ context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.mu.Lock()
		m.calls++
		m.last = req
		fail := m.fail
		m.mu.Unlock()
		if fail {
			yield(model.Chunk{}, errors.New("the summary model is down"))
			return
		}
		lines := strings.Split(strings.TrimSpace(req.Messages[len(req.Messages)-1].Content), "\n")
		yield(model.Chunk{Delta: fmt.Sprintf("summary of %d lines from %q", len(lines), lines[0]), FinishReason: model.FinishStop}, nil)
	}
}

func (m *summaryModel) set(fail bool) (calls int, last model.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = fail
	return m.calls, m.last
}

// A compaction stores the summary at the next version, the context uses it in place of the
// messages it covers, a fork made before it does not see it and one made after does; a failing
// summarizer writes nothing; a repeat of its request id answers the first without a new call.
func TestCompactSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("long")
	path := "/v1/sessions/" + s.ID
	wantStatus(t, e.json("POST", path+"/messages", e.aliceKey, `{"messages":[
		{"role":"user","content":"first question"},{"role":"assistant","content":"first answer"},
		{"role":"user","content":"read a.go"},
		{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"read_file","arguments":{"path":"a.go"}}]},
		{"role":"tool","tool_call_id":"c1","content":"package a"},
		{"role":"assistant","content":"a.go is package a"}]}`), http.StatusCreated)
	early := decodeBody[carryon.Session](t, e.json("POST", path+"/fork", e.aliceKey, `{}`))

	// The summarizer fails: 503, nothing stored, the context as it was.
	before := e.json("GET", path+"/context", e.aliceKey, "")
	e.summaries.set(true)
	wantProblem(t, e.json("POST", path+"/compact", e.aliceKey, `{"keep_last":2}`), http.StatusServiceUnavailable, carryon.EUNAVAILABLE)
	if after := e.json("GET", path+"/context", e.aliceKey, ""); string(after.body) != string(before.body) {
		t.Fatalf("a failed compaction changed the context:\n%s\n%s", before.body, after.body)
	}
	e.summaries.set(false)

	// keep_last 2 would split the tool call (seq 4) from its result (seq 5): the cut moves to 3.
	a := e.json("POST", path+"/compact", e.aliceKey, `{"keep_last":2,"instructions":"keep file names","request_id":"cmp-1","expected_version":2}`)
	wantStatus(t, a, http.StatusCreated)
	c := decodeBody[carryon.Compaction](t, a)
	if c.Seq != 7 || c.CoversFrom != 1 || c.CoversTo != 3 || c.Version != 3 || c.Model != "scripted" ||
		c.Instructions != "keep file names" || c.RequestID != "cmp-1" || c.TokensBefore == 0 || c.TokensAfter == 0 {
		t.Fatalf("compaction = %+v, want seq 7 covering 1-3 at version 3 with its token counts", c)
	}
	if want := `summary of 3 lines from "user: first question"`; c.Summary != want {
		t.Fatalf("summary = %q, want %q", c.Summary, want)
	}
	calls, last := e.summaries.set(false)
	if !strings.Contains(last.System, "keep file names") {
		t.Fatalf("the summarizer's prompt lacks the instructions: %q", last.System)
	}
	// A repeat answers the first compaction, without asking the model again.
	again := e.json("POST", path+"/compact", e.aliceKey, `{"keep_last":2,"instructions":"keep file names","request_id":"cmp-1","expected_version":2}`)
	wantStatus(t, again, http.StatusCreated)
	if n, _ := e.summaries.set(false); n != calls || decodeBody[carryon.Compaction](t, again).Seq != 7 {
		t.Fatalf("the repeat asked the model again (%d calls, then %d) or answered another compaction", calls, n)
	}
	// A stale expected version is refused before the model is asked.
	wantProblem(t, e.json("POST", path+"/compact", e.aliceKey, `{"expected_version":2}`), http.StatusConflict, carryon.EVERSION)

	cx := decodeBody[carryon.ContextPreview](t, e.json("GET", path+"/context", e.aliceKey, ""))
	if !strings.Contains(cx.System, c.Summary) || cx.FirstSeq != 4 || cx.LastSeq != 6 {
		t.Fatalf("context has messages %d-%d and system %q, want the summary and messages 4-6", cx.FirstSeq, cx.LastSeq, cx.System)
	}
	late := decodeBody[carryon.Session](t, e.json("POST", path+"/fork", e.aliceKey, `{}`))
	for id, want := range map[string]int{s.ID: 1, early.ID: 0, late.ID: 1} {
		page := decodeBody[carryon.CompactionPage](t, e.json("GET", "/v1/sessions/"+id+"/compactions", e.aliceKey, ""))
		if len(page.Items) != want {
			t.Fatalf("session %s lists %d compactions, want %d", id, len(page.Items), want)
		}
	}
	wantProblem(t, e.json("GET", path+"/compactions", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("POST", path+"/compact", e.aliceKey, `{"keep_last":-1}`), http.StatusBadRequest, carryon.EINVALID)
	// Everything is summarized already but what keep_last keeps: nothing to compact.
	wantProblem(t, e.json("POST", path+"/compact", e.aliceKey, `{"keep_last":3}`), http.StatusBadRequest, carryon.EINVALID)
}

// A session whose run waits for an approval is busy: a compaction is refused with 409
// session_busy naming the run, before the model is asked, and nothing is stored.
func TestCompactBusySession(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, envOptions{approvals: true}, nil)
	s, run, _ := waitingWrite(t, e)
	before, _ := e.summaries.set(false)
	a := e.json("POST", "/v1/sessions/"+s.ID+"/compact", e.aliceKey, `{}`)
	wantProblem(t, a, http.StatusConflict, carryon.EBUSY)
	if !strings.Contains(a.problem.Detail, run.ID) {
		t.Fatalf("detail %q does not name the active run %s", a.problem.Detail, run.ID)
	}
	if n, _ := e.summaries.set(false); n != before {
		t.Fatal("the summarizer was asked for a busy session")
	}
	if page := decodeBody[carryon.CompactionPage](t, e.json("GET", "/v1/sessions/"+s.ID+"/compactions", e.aliceKey, "")); len(page.Items) != 0 {
		t.Fatalf("a refused compaction stored %+v", page.Items)
	}
}
