package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/scripted"
	"github.com/carryon-hub/carryon/internal/tool"
)

// talker is the scripted model saying something before each answer, tool calls included: the kind
// of model whose deltas reach the consumer before the step's tool calls are planned.
type talker struct{ scripted.Provider }

func (t *talker) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if !yield(model.Chunk{Delta: "Let me look at that. "}, nil) {
			return
		}
		for c, err := range t.Provider.Stream(ctx, req) {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// recordingHub is an engine.Hub that records what the engine asks of it, with writes that succeed
// until one would store the failAt-th event (from 1; 0 never), which fails with errDatabaseGone,
// its events with it.
type recordingHub struct {
	mu      sync.Mutex
	calls   []string
	events  int
	failAt  int
	actions map[int][]*carryon.Action
	// budgetChecks is how many budget checks pass before one finds a budget spent (0: all pass).
	budgetChecks int
	// used is the usage the writes that store model answers recorded.
	used carryon.Usage
}

var errDatabaseGone = errors.New("the database went away")

func (h *recordingHub) record(call string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, call)
}

func (h *recordingHub) recorded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// write records a write of call storing events of types, or its failure.
func (h *recordingHub) write(call string, types ...carryon.EventType) ([]carryon.Event, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failAt > 0 && h.events+len(types) >= h.failAt {
		h.calls = append(h.calls, call+" failed")
		return nil, errDatabaseGone
	}
	var out []carryon.Event
	for _, t := range types {
		h.events++
		out = append(out, carryon.Event{Type: t, Seq: int64(h.events)})
	}
	h.calls = append(h.calls, call)
	return out, nil
}

// deltas is n model.delta event types.
func deltas(n int) []carryon.EventType {
	out := make([]carryon.EventType, n)
	for i := range out {
		out[i] = carryon.EventModelDelta
	}
	return out
}

func (h *recordingHub) AppendMessages(ctx context.Context, run *carryon.Run, msgs []carryon.NewMessage) ([]carryon.Event, error) {
	return h.write("append", carryon.EventMessageAppended)
}

func (h *recordingHub) Compact(ctx context.Context, run *carryon.Run, requestID string, plan func(context.Context) (carryon.NewMessage, error)) ([]carryon.Event, error) {
	if _, err := plan(ctx); err != nil {
		return nil, err
	}
	return h.write("compact", carryon.EventMessageAppended)
}

func (h *recordingHub) WorkingMemoryPreview(ctx context.Context, run *carryon.Run, patches []json.RawMessage) (carryon.WorkingMemory, error) {
	h.record("memory preview")
	return carryon.WorkingMemory{}, nil
}

func (h *recordingHub) PlanStep(ctx context.Context, run *carryon.Run, p engine.Plan) ([]carryon.Event, error) {
	h.addUsed(p.Usage)
	call, types := "plan", append(deltas(len(p.Deltas)), carryon.EventMessageAppended)
	if a := p.Actions[0]; a.Status == carryon.ActionStarted {
		call, types = "plan, start "+a.Tool, append(types, carryon.EventToolStarted)
	}
	evs, err := h.write(call, types...)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.actions == nil {
		h.actions = map[int][]*carryon.Action{}
	}
	for _, a := range p.Actions {
		h.actions[a.Step] = append(h.actions[a.Step], a)
	}
	h.mu.Unlock()
	return evs, nil
}

func (h *recordingHub) StepActions(ctx context.Context, run *carryon.Run, step int) ([]*carryon.Action, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.actions[step], nil
}

func (h *recordingHub) StartAction(ctx context.Context, run *carryon.Run, done, a *carryon.Action) ([]carryon.Event, error) {
	if done != nil {
		return h.write("finish "+done.Tool+", start "+a.Tool, carryon.EventToolFinished, carryon.EventToolStarted)
	}
	return h.write("start "+a.Tool, carryon.EventToolStarted)
}

func (h *recordingHub) FinishAction(ctx context.Context, run *carryon.Run, a *carryon.Action) ([]carryon.Event, error) {
	return h.write("finish "+a.Tool, carryon.EventToolFinished)
}

func (h *recordingHub) CommitStep(ctx context.Context, run *carryon.Run, c engine.Commit) ([]carryon.Event, error) {
	h.addUsed(c.Usage)
	if c.Done != nil {
		return h.write("finish "+c.Done.Tool+", commit", append(append([]carryon.EventType{carryon.EventToolFinished}, deltas(len(c.Deltas))...), carryon.EventMessageAppended)...)
	}
	return h.write("commit", append(deltas(len(c.Deltas)), carryon.EventMessageAppended)...)
}

func (h *recordingHub) StopRequested(ctx context.Context, run *carryon.Run) (string, error) {
	return "", nil
}

func (h *recordingHub) CheckBudget(ctx context.Context, run *carryon.Run) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, "budget")
	if h.budgetChecks > 0 && len(slices.DeleteFunc(slices.Clone(h.calls), func(c string) bool { return c != "budget" })) > h.budgetChecks {
		return &carryon.BudgetStop{Reason: carryon.ReasonBudgetExceeded, Scope: carryon.BudgetScopeSession, OnExceed: carryon.BudgetPause}
	}
	return nil
}

// addUsed notes the usage a write recorded.
func (h *recordingHub) addUsed(u carryon.Usage) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.used.InputTokens += u.InputTokens
	h.used.OutputTokens += u.OutputTokens
}

func (h *recordingHub) Preview(ctx context.Context, run *carryon.Run, ev carryon.Event) {
	h.record("preview " + string(ev.Type))
}

// seamRun is a run on a new session of f holding the user's message.
func seamRun(t *testing.T, f *fixture, message string) *carryon.Run {
	t.Helper()
	s, err := f.sess.Create(f.alice, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sess.AppendMessages(f.alice, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: message}}}); err != nil {
		t.Fatal(err)
	}
	return &carryon.Run{ID: carryon.NewID("run_"), SessionID: s.ID, OwnerID: "usr_alice", Status: carryon.RunRunning, Attempt: 1}
}

// TestConsumerStopsEarly: a consumer that stops after the first event (the model's first words,
// stored with the step's plan, which journals the first call started) ends the run there: no tool
// call runs, nothing more is stored or yielded, and the iterator does not panic (the next attempt
// settles the started call by its effect class, as after a crash). (On cac1ba6 the step went on after the consumer had
// stopped, planned and ran the tools, and yielded its error to a consumer that had returned false.)
func TestConsumerStopsEarly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &talker{}, "scripted")
	hub := &recordingHub{}
	run := seamRun(t, f, "Write the plan: outline, then draft")
	n := 0
	for ev, err := range f.eng.Run(f.alice, hub, run) {
		if err != nil {
			t.Fatalf("error before the consumer stopped: %v", err)
		}
		n++
		if ev.Type != carryon.EventModelDelta {
			t.Fatalf("first event %s, want model.delta", ev.Type)
		}
		break
	}
	if got, want := strings.Join(hub.recorded(), ", "), "budget, preview model.delta, plan, start update_working_memory"; n != 1 || got != want {
		t.Fatalf("after the consumer stopped at event %d the engine went on: %q, want %q", n, got, want)
	}
}

// TestEventWriteFailsMidStep: when a write fails in the middle of a step (a database failover),
// the run ends at once with that error, yielded once, and nothing of the failed write is yielded:
// the step's tool calls do not run. (On cac1ba6 the engine ignored the failure of its consumer's
// write and went on running tools.)
func TestEventWriteFailsMidStep(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &talker{}, "scripted")
	hub := &recordingHub{failAt: 1}
	run := seamRun(t, f, "Write the plan: outline, then draft")
	var errs []error
	for ev, err := range f.eng.Run(f.alice, hub, run) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t.Fatalf("yielded an event that was not stored: %s", ev.Type)
	}
	if len(errs) != 1 || !errors.Is(errs[0], errDatabaseGone) {
		t.Fatalf("errors = %v, want one that is the store's", errs)
	}
	if got, want := strings.Join(hub.recorded(), ", "), "budget, preview model.delta, plan, start update_working_memory failed"; got != want {
		t.Fatalf("after a failed write the engine did %q, want %q", got, want)
	}
}

// TestOddTextIsStored: a tool's output with invalid UTF-8, a NUL and a multi-byte character at the
// 64 KiB cut is stored as valid text, and the run goes on. (On cac1ba6 a CJK file cut at 64 KiB
// split a character and the run failed.)
func TestOddTextIsStored(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("a", 64<<10-1) + "漢字"
	odd := &probeTool{name: "odd", out: "bad \xff byte, nul \x00 here; " + big}
	f := newFixture(t, &callsOnce{tool: "odd"}, "scripted", odd)
	_, run := f.start(t, "go")
	got := f.wait(t, run.ID)
	if got.Status != carryon.RunSucceeded {
		t.Fatalf("run: %s (%s)", got.Status, got.Error)
	}
	acts, _ := f.runs.Actions(f.alice, run.ID)
	if len(acts) != 1 || !utf8.ValidString(acts[0].Result) || strings.ContainsRune(acts[0].Result, 0) || !strings.HasSuffix(acts[0].Result, "…(truncated)") {
		t.Fatalf("stored result is not clean text: %d actions, valid %v", len(acts), len(acts) == 1 && utf8.ValidString(acts[0].Result))
	}
}

// probeTool is a read tool that answers out.
type probeTool struct{ name, out string }

func (p *probeTool) Name() string                { return p.name }
func (p *probeTool) Description() string         { return "A tool of the tests." }
func (p *probeTool) Schema() json.RawMessage     { return json.RawMessage(`{"type":"object"}`) }
func (p *probeTool) Effect() carryon.EffectClass { return carryon.EffectRead }
func (p *probeTool) Call(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{Content: p.out}, nil
}

// callsOnce calls one tool, then ends its turn once the result is in.
type callsOnce struct{ tool string }

func (c *callsOnce) Name() string { return "calls-once" }

func (c *callsOnce) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleTool {
			yield(model.Chunk{Delta: "Done.", FinishReason: model.FinishStop}, nil)
			return
		}
		yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_1", Name: c.tool, Arguments: []byte(`{}`)}}, FinishReason: model.FinishToolCalls}, nil)
	}
}

// TestBudgetCheckedBeforeEveryModelCall: the engine asks the Hub about budgets before each model
// call and at no other point (never between a call's start and finish), stops with the Hub's
// *carryon.BudgetStop, and hands each model call's usage to the write that stores its answer, so
// what the writes recorded is what the run used. (The seam's hub stores nothing, so the test
// stops at the budget: the pause and the approval that continues are internal/runs tests.)
func TestBudgetCheckedBeforeEveryModelCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t, &talker{}, "scripted")
	hub := &recordingHub{budgetChecks: 1}
	run := seamRun(t, f, "Write the plan: outline, then draft")
	var errs []error
	for _, err := range f.eng.Run(f.alice, hub, run) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var stop *carryon.BudgetStop
	if len(errs) != 1 || !errors.As(errs[0], &stop) {
		t.Fatalf("errors = %v, want one *carryon.BudgetStop", errs)
	}
	calls := hub.recorded()
	if calls[0] != "budget" || calls[len(calls)-1] != "budget" || run.Step != 1 {
		t.Fatalf("calls %q at step %d: want a budget check first and last, after step 1", calls, run.Step)
	}
	inTool := false
	for _, c := range calls {
		parts := strings.Split(c, ", ")
		switch last := parts[len(parts)-1]; {
		case strings.HasPrefix(last, "start "):
			inTool = true
		case strings.HasPrefix(c, "finish "):
			inTool = false
		case c == "budget" && inTool:
			t.Fatalf("a budget check inside a tool call: %q", calls)
		}
	}
	if hub.used != run.Usage || run.Usage.InputTokens == 0 {
		t.Fatalf("writes recorded usage %+v, the run used %+v", hub.used, run.Usage)
	}
}

// stoppingHub is a recordingHub whose write that is to carry a call's outcome (the next call's
// start, or the checkpoint) fails because the run is stopped while it commits.
type stoppingHub struct {
	recordingHub
	stop func()
	at   string // "start" or "commit"
}

func (h *stoppingHub) StartAction(ctx context.Context, run *carryon.Run, done, a *carryon.Action) ([]carryon.Event, error) {
	if done != nil && h.at == "start" {
		h.stop()
		h.record("start " + a.Tool + " stopped")
		return nil, context.Canceled
	}
	return h.recordingHub.StartAction(ctx, run, done, a)
}

func (h *stoppingHub) CommitStep(ctx context.Context, run *carryon.Run, c engine.Commit) ([]carryon.Event, error) {
	if c.Done != nil && h.at == "commit" {
		h.stop()
		h.record("commit stopped")
		return nil, context.Canceled
	}
	return h.recordingHub.CommitStep(ctx, run, c)
}

// TestStopKeepsTheOutcome: a user's stop that lands while the write carrying a call's outcome
// commits (the next call's start, or the step's checkpoint) still leaves the outcome journaled:
// it is written on its own, and the run ends stopped. (Before, the outcome had a write of its
// own; merged into the next one, a stop in that write would have lost it.)
func TestStopKeepsTheOutcome(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"start", "commit"} {
		t.Run(at, func(t *testing.T) {
			f := newFixture(t, &talker{}, "scripted")
			ctx, cancel := context.WithCancelCause(f.alice)
			hub := &stoppingHub{at: at, stop: func() { cancel(&engine.ErrStopped{Reason: "cancel"}) }}
			run := seamRun(t, f, "Write the plan: outline, then draft")
			var errs []error
			for _, err := range f.eng.Run(ctx, hub, run) {
				if err != nil {
					errs = append(errs, err)
				}
			}
			calls := hub.recorded()
			i := slices.IndexFunc(calls, func(c string) bool { return strings.HasSuffix(c, " stopped") })
			if i < 0 || i+1 >= len(calls) || !strings.HasPrefix(calls[i+1], "finish ") {
				t.Fatalf("calls %q: the stopped write is not followed by the call's outcome", calls)
			}
			if len(errs) != 1 {
				t.Fatalf("errors %v, want the stop", errs)
			}
		})
	}
}
