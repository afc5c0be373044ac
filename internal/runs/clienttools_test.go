package runs_test

import (
	"context"
	"encoding/json"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// asker is a model that makes the given calls in its first step and, once tool results are in
// the conversation, answers "Done: " and the results it got. It keeps every request.
type asker struct {
	calls []model.ToolCall
	mu    sync.Mutex
	reqs  []model.Request
}

func (a *asker) Name() string { return "asker" }

func (a *asker) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	a.mu.Lock()
	a.reqs = append(a.reqs, req)
	a.mu.Unlock()
	return func(yield func(model.Chunk, error) bool) {
		var results []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
			results = append([]string{req.Messages[i].Content}, results...)
		}
		if len(results) > 0 {
			yield(model.Chunk{Delta: "Done: " + strings.Join(results, " | "), FinishReason: model.FinishStop}, nil)
			return
		}
		yield(model.Chunk{ToolCalls: a.calls, FinishReason: model.FinishToolCalls}, nil)
	}
}

// offered reports whether the model's last request offered a tool of that name.
func (a *asker) offered(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.reqs[len(a.reqs)-1].Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// recorder is a server tool that records the arguments of each call.
type recorder struct {
	name   string
	effect carryon.EffectClass
	mu     sync.Mutex
	args   []string
}

func (r *recorder) Name() string                { return r.name }
func (r *recorder) Description() string         { return "A tool of the tests." }
func (r *recorder) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (r *recorder) Effect() carryon.EffectClass { return r.effect }
func (r *recorder) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = append(r.args, string(c.Args))
	return tool.Result{Content: r.name + " ran with " + string(c.Args)}, nil
}

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.args...)
}

// toolRunner is a run manager whose engine asks for approval before the tools approval names.
func toolRunner(t *testing.T, st store.Store, sess *sessions.Service, data string, p model.Provider, cfg runs.Config, approval []string, extra ...tool.Tool) *runs.Service {
	t.Helper()
	reg, err := tool.NewRegistry(append(workspace.Tools(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	needs := func(name string) bool {
		for _, n := range approval {
			if n == name {
				return true
			}
		}
		return false
	}
	eng := engine.New(engine.Config{Model: "asker", Workspaces: filepath.Join(data, "workspaces"), Approval: needs}, p, reg, contextbuild.New(contextbuild.Config{}, sess, nil))
	if cfg.Poll == 0 {
		cfg.Poll = 20 * time.Millisecond
	}
	return runs.New(st, sess, eng, cfg)
}

var weather = carryon.ClientTool{Name: "get_weather", Description: "The weather in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

// TestClientTools: a run whose model calls a client tool (and a server tool in the same step)
// stops in requires_action with the call; bad outputs are refused and change nothing; two clients
// answer at once and one wins; the run goes on, the model gets the client's output, and a
// restart between the stop and the outputs loses nothing.
func TestClientTools(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			st := d.open(t)
			e := newHubEnv(t, st, sessions.Config{})
			note := &recorder{name: "note", effect: carryon.EffectRead}
			m := &asker{calls: []model.ToolCall{
				{ID: "call_w", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_n", Name: "note", Arguments: json.RawMessage(`{"n":1}`)},
			}}
			first := toolRunner(t, st, e.sess, e.data, m, runs.Config{}, nil, note)
			stopFirst := work(t, first)
			s, err := e.sess.Create(e.alice, carryon.NewSession{})
			if err != nil {
				t.Fatal(err)
			}
			run, err := first.Start(e.alice, s.ID, carryon.NewRun{Message: "What is the weather in Paris?", Tools: []carryon.ClientTool{weather}})
			if err != nil {
				t.Fatal(err)
			}
			run = waitRun(t, first, e.alice, run.ID)
			if run.Status != carryon.RunRequiresAction || run.RequiredAction == nil || len(run.RequiredAction.ToolCalls) != 1 {
				t.Fatalf("run = %s %+v, want requires_action with one call", run.Status, run.RequiredAction)
			}
			if c := run.RequiredAction.ToolCalls[0]; c.CallID != "call_w" || c.Name != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` {
				t.Fatalf("required call = %+v", c)
			}
			if !m.offered("get_weather") || !m.offered("note") {
				t.Fatalf("the model was not offered both the client and the server tool")
			}
			if got := note.calls(); len(got) != 1 {
				t.Fatalf("the server tool of the step ran %d times, want once before the run stopped", len(got))
			}
			acts, err := first.Actions(e.alice, run.ID)
			if err != nil || len(acts) != 2 || acts[0].Executor != carryon.ExecutorClient || acts[0].Status != carryon.ActionWaiting || acts[1].Status != carryon.ActionSucceeded {
				t.Fatalf("journal = %+v, %v", acts, err)
			}
			if ev := lastEvent(t, st, run.ID); ev.Type != carryon.EventRunRequiresAction || !strings.Contains(string(ev.Data), `"call_w"`) {
				t.Fatalf("last event = %s %s, want run.requires_action naming the call", ev.Type, ev.Data)
			}

			// A restart: the first process is gone; a new one serves the rest.
			stopFirst()
			svc := toolRunner(t, st, e.sess, e.data, m, runs.Config{}, nil, note)
			work(t, svc)

			bob := newUser(t, st, "usr_bob", "bob")
			for _, bad := range []struct {
				ctx  context.Context
				in   carryon.ToolOutputs
				code string
				says string
			}{
				{e.alice, carryon.ToolOutputs{}, carryon.EINVALID, "one output per pending tool call"},
				{e.alice, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_x", Output: "?"}}}, carryon.EINVALID, "call_x"},
				{e.alice, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: "a"}, {CallID: "call_w", Output: "b"}}}, carryon.EINVALID, "twice"},
				{e.alice, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_n", Output: "a"}}}, carryon.EINVALID, "call_n"},
				{e.alice, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: "bad \x00"}}}, carryon.EINVALID, "NUL"},
				{bob, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: "stolen"}}}, carryon.ENOTFOUND, ""},
			} {
				_, err := svc.SubmitToolOutputs(bad.ctx, run.ID, bad.in)
				if carryon.ErrorCode(err) != bad.code || !strings.Contains(err.Error(), bad.says) {
					t.Fatalf("SubmitToolOutputs(%+v) = %v; want %s saying %q", bad.in, err, bad.code, bad.says)
				}
			}
			if r, _ := svc.GetRun(e.alice, run.ID); r.Status != carryon.RunRequiresAction {
				t.Fatalf("after refused outputs the run is %s", r.Status)
			}

			// Two clients answer at once, each with its own request id: one wins, the other is
			// told the run no longer waits.
			var wins, conflicts atomic.Int32
			var wg sync.WaitGroup
			for i, out := range []string{"sunny, 21 °C", "rainy, 12 °C"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := svc.SubmitToolOutputs(e.alice, run.ID, carryon.ToolOutputs{
						Outputs:      []carryon.ToolOutput{{CallID: "call_w", Output: out}},
						RetryOptions: carryon.RetryOptions{RequestID: []string{"req_a", "req_b"}[i]},
					})
					switch carryon.ErrorCode(err) {
					case "":
						wins.Add(1)
					case carryon.ECONFLICT:
						conflicts.Add(1)
					default:
						t.Errorf("SubmitToolOutputs: %v", err)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 || conflicts.Load() != 1 {
				t.Fatalf("%d wins and %d conflicts, want one of each", wins.Load(), conflicts.Load())
			}
			done := waitRun(t, svc, e.alice, run.ID)
			if done.Status != carryon.RunSucceeded {
				t.Fatalf("run = %s (%s), want succeeded", done.Status, done.Error)
			}
			if !strings.Contains(done.Reply, "sunny, 21 °C") && !strings.Contains(done.Reply, "rainy, 12 °C") ||
				!strings.Contains(done.Reply, `note ran with {"n":1}`) {
				t.Fatalf("reply = %q; want the client's output and the server tool's result", done.Reply)
			}
			if got := note.calls(); len(got) != 1 {
				t.Fatalf("the server tool ran %d times in all, want once", len(got))
			}
			// The winner's request id replays; the loser's, retried now, is a conflict again.
			winner := "req_a"
			if strings.Contains(done.Reply, "rainy") {
				winner = "req_b"
			}
			for _, id := range []string{"req_a", "req_b"} {
				_, err := svc.SubmitToolOutputs(e.alice, run.ID, carryon.ToolOutputs{
					Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: map[string]string{"req_a": "sunny, 21 °C", "req_b": "rainy, 12 °C"}[id]}}, RetryOptions: carryon.RetryOptions{RequestID: id},
				})
				if id == winner && err != nil || id != winner && carryon.ErrorCode(err) != carryon.ECONFLICT {
					t.Fatalf("retry of %s (the winner is %s): %v", id, winner, err)
				}
			}
			if _, err := svc.SubmitToolOutputs(e.alice, run.ID, carryon.ToolOutputs{Outputs: []carryon.ToolOutput{{CallID: "call_w", Output: "late"}}}); carryon.ErrorCode(err) != carryon.ECONFLICT {
				t.Fatalf("outputs for a finished run: %v, want conflict", err)
			}
		})
	}
}

// TestClientToolsRefused: tools a model could not be offered are refused at the start, and the
// start stores nothing.
func TestClientToolsRefused(t *testing.T) {
	t.Parallel()
	st := drivers()[0].open(t)
	e := newHubEnv(t, st, sessions.Config{})
	svc := toolRunner(t, st, e.sess, e.data, &asker{}, runs.Config{}, nil)
	s, err := e.sess.Create(e.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tools []carryon.ClientTool
		says  string
	}{
		{[]carryon.ClientTool{{Name: "bad name"}}, "name must match"},
		{[]carryon.ClientTool{{Name: ""}}, "name must match"},
		{[]carryon.ClientTool{{Name: "x"}, {Name: "x"}}, "declared twice"},
		{[]carryon.ClientTool{{Name: "write_file"}}, "the name of a tool of agent default"},
		{[]carryon.ClientTool{{Name: "x", Parameters: json.RawMessage(`{"type":"string"}`)}}, "JSON Schema of an object"},
		{[]carryon.ClientTool{{Name: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"text"}}}`)}}, "unknown type"},
		{make([]carryon.ClientTool, carryon.MaxClientTools+1), "at most"},
	} {
		_, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "hi", Tools: c.tools})
		if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Start with tools %v = %v; want invalid saying %q", c.tools, err, c.says)
		}
	}
	page, err := svc.ListRuns(e.alice, s.ID, carryon.RunFilter{})
	if err != nil || len(page.Items) != 0 {
		t.Fatalf("refused starts stored runs: %v, %v", page, err)
	}
}

// TestClientToolsTimeout: a run that waits for tool outputs longer than ToolOutputTimeout fails
// with an error that says so, and frees its session.
func TestClientToolsTimeout(t *testing.T) {
	t.Parallel()
	st := drivers()[0].open(t)
	clk := newClock()
	e := newHubEnv(t, st, sessions.Config{Now: clk.Now})
	m := &asker{calls: []model.ToolCall{{ID: "call_w", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}}
	svc := toolRunner(t, st, e.sess, e.data, m, runs.Config{Now: clk.Now, ToolOutputTimeout: time.Hour}, nil)
	work(t, svc)
	s, err := e.sess.Create(e.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "Weather?", Tools: []carryon.ClientTool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	if run = waitRun(t, svc, e.alice, run.ID); run.Status != carryon.RunRequiresAction {
		t.Fatalf("run = %s, want requires_action", run.Status)
	}
	clk.Advance(59 * time.Minute)
	svc.Wake()
	clk.Advance(2 * time.Minute)
	waitFor(t, "the run to fail", func() bool { return getRun(t, st, run.ID).Status == carryon.RunFailed })
	got := getRun(t, st, run.ID)
	if !strings.Contains(got.Error, "no tool outputs came within 1h0m0s") {
		t.Fatalf("error = %q", got.Error)
	}
	if _, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: "again"}); err != nil {
		t.Fatalf("the session is still held: %v", err)
	}
}

// TestApprovalBeforeCall: a tool that asks for approval stops the run before the call with the
// proposed arguments; approve runs it, approve with arguments runs the edited call (the journal
// keeps the model's), reject tells the model; another user cannot see or decide any of it; the
// decisions survive a restart.
func TestApprovalBeforeCall(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			st := d.open(t)
			e := newHubEnv(t, st, sessions.Config{})
			deploy := &recorder{name: "deploy", effect: carryon.EffectUnsafe}
			m := &asker{calls: []model.ToolCall{{ID: "call_d", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}}}
			newSvc := func() (*runs.Service, func()) {
				svc := toolRunner(t, st, e.sess, e.data, m, runs.Config{}, []string{"deploy"}, deploy)
				return svc, work(t, svc)
			}
			svc, stop := newSvc()
			bob := newUser(t, st, "usr_bob", "bob")
			waiting := func(msg string) (*carryon.Run, *carryon.Action) {
				t.Helper()
				ran := len(deploy.calls())
				s, err := e.sess.Create(e.alice, carryon.NewSession{})
				if err != nil {
					t.Fatal(err)
				}
				run, err := svc.Start(e.alice, s.ID, carryon.NewRun{Message: msg})
				if err != nil {
					t.Fatal(err)
				}
				run = waitRun(t, svc, e.alice, run.ID)
				if run.Status != carryon.RunWaitingApproval || run.PendingAction == nil || string(run.PendingAction.Args) != `{"env":"prod"}` {
					t.Fatalf("run = %s (%s), pending %+v; want waiting_approval on the proposed call", run.Status, run.Error, run.PendingAction)
				}
				acts, err := svc.Actions(e.alice, run.ID)
				if err != nil || len(acts) != 1 || acts[0].Status != carryon.ActionWaiting || acts[0].Approval != carryon.ApprovalRequired || string(acts[0].Args) != `{"env":"prod"}` {
					t.Fatalf("journal = %+v, %v", acts, err)
				}
				if ev := lastEvent(t, st, run.ID); ev.Type != carryon.EventRunWaiting || !strings.Contains(string(ev.Data), `"approval":"required"`) || !strings.Contains(string(ev.Data), `prod`) {
					t.Fatalf("last event = %s %s, want run.waiting_approval with the proposed call", ev.Type, ev.Data)
				}
				if len(deploy.calls()) != ran {
					t.Fatalf("the tool ran before its approval")
				}
				return run, acts[0]
			}

			// Approve with edited arguments, across a restart.
			run, act := waiting("Deploy it.")
			stop()
			svc, _ = newSvc() // stopped by its cleanup
			for _, c := range []struct {
				ctx  context.Context
				in   carryon.Approval
				code string
			}{
				{bob, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove}, carryon.ENOTFOUND},
				{e.alice, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionRerun}, carryon.ECONFLICT},
				{e.alice, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove, Arguments: json.RawMessage(`[1]`)}, carryon.EINVALID},
				{e.alice, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionReject, Arguments: json.RawMessage(`{}`)}, carryon.EINVALID},
				{e.alice, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove, Arguments: json.RawMessage(`{"env":"a\u0000"}`)}, carryon.EINVALID},
				{e.alice, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove, Arguments: json.RawMessage(`{"replicas":1e400}`)}, carryon.EINVALID},
			} {
				if _, err := svc.Approve(c.ctx, run.ID, c.in); carryon.ErrorCode(err) != c.code {
					t.Fatalf("Approve(%+v) = %v, want %s", c.in, err, c.code)
				}
			}
			if _, err := svc.Actions(bob, run.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
				t.Fatalf("bob reads the journal: %v", err)
			}
			edit := carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove, Arguments: json.RawMessage(`{"env":"staging"}`), RetryOptions: carryon.RetryOptions{RequestID: "req_edit"}}
			if _, err := svc.Approve(e.alice, run.ID, edit); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Approve(e.alice, run.ID, edit); err != nil {
				t.Fatalf("a repeat of the approval: %v", err)
			}
			done := waitRun(t, svc, e.alice, run.ID)
			if done.Status != carryon.RunSucceeded || !strings.Contains(done.Reply, `deploy ran with {"env":"staging"}`) {
				t.Fatalf("run = %s %q", done.Status, done.Reply)
			}
			if got := deploy.calls(); len(got) != 1 || got[0] != `{"env":"staging"}` {
				t.Fatalf("tool calls = %v, want the edited call once", got)
			}
			acts, _ := svc.Actions(e.alice, run.ID)
			if a := acts[0]; a.Approval != carryon.ApprovalEdited || string(a.OriginalArgs) != `{"env":"prod"}` || string(a.Args) != `{"env":"staging"}` || a.Status != carryon.ActionSucceeded {
				t.Fatalf("journal = %+v, want edited with the model's arguments kept", a)
			}

			// Approve as proposed.
			run, act = waiting("Deploy again.")
			if _, err := svc.Approve(e.alice, run.ID, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionApprove}); err != nil {
				t.Fatal(err)
			}
			if done := waitRun(t, svc, e.alice, run.ID); done.Status != carryon.RunSucceeded || !strings.Contains(done.Reply, `{"env":"prod"}`) {
				t.Fatalf("run = %s %q", done.Status, done.Reply)
			}

			// Reject: the model is told, the tool does not run.
			run, act = waiting("And once more.")
			if _, err := svc.Approve(e.alice, run.ID, carryon.Approval{ActionID: act.ID, Decision: carryon.DecisionReject, Reason: "not on a Friday"}); err != nil {
				t.Fatal(err)
			}
			done = waitRun(t, svc, e.alice, run.ID)
			if done.Status != carryon.RunSucceeded || !strings.Contains(done.Reply, "rejected by the user: not on a Friday") {
				t.Fatalf("run = %s %q", done.Status, done.Reply)
			}
			if got := deploy.calls(); len(got) != 2 {
				t.Fatalf("tool calls = %v, want two (the rejected one did not run)", got)
			}
			acts, _ = svc.Actions(e.alice, run.ID)
			if a := acts[0]; a.Approval != carryon.ApprovalRejected || a.Status != carryon.ActionSkipped {
				t.Fatalf("journal = %+v, want rejected and skipped", a)
			}
		})
	}
}

// lastEvent reads the run's last stored event.
func lastEvent(t *testing.T, st store.Store, runID string) *carryon.Event {
	t.Helper()
	var evs []*carryon.Event
	err := st.Read(context.Background(), func(tx store.Tx) error {
		var err error
		evs, err = tx.EventsAfter(context.Background(), "usr_alice", runID, 0, 1000)
		return err
	})
	if err != nil || len(evs) == 0 {
		t.Fatalf("events of %s: %v, %v", runID, evs, err)
	}
	return evs[len(evs)-1]
}

// newUser stores a user and returns a context acting for it.
func newUser(t *testing.T, st store.Store, id, name string) context.Context {
	t.Helper()
	u := &carryon.User{ID: id, Name: name}
	if err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error { return tx.InsertUser(context.Background(), u) }); err != nil {
		t.Fatal(err)
	}
	return carryon.NewContextWithUser(context.Background(), u)
}
