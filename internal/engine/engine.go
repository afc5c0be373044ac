// Package engine is the agent loop: build the context from the session's stored state, call the
// model, run the tools it asks for with every call journaled before and after, write the new
// messages and memory back, checkpoint, repeat. A run is an iterator of events
// (iter.Seq2[carryon.Event, error]).
//
// A step with k tool calls is stored in k + 1 write transactions, each with the events that
// report it: the model's answer (its deltas, the assistant message, every call as a pending
// action, and the first call started, right before it runs); each next call's start, with the
// outcome of the call before it; the results (the last call's outcome, the tool messages, the
// working memory changes the step's update_working_memory calls staged, and the step's
// checkpoint, so a crash leaves the memory change and the results together or neither). A call
// is always journaled started, durably, before it runs, and its outcome is durable before
// anything else of the run happens; a crash between the two leaves it started, for recovery to
// settle by its effect class. The
// model's deltas are previewed to the run's live streams as they come (Hub.Preview) and stored
// with the step's next write. A step cut off by a crash is resumed from the journal, not from the
// chat: the model is not asked again, and each call is settled by its effect class.
//
// The engine never touches the database: every write goes through a Hub, which the run manager
// implements on the hub services with the run's attempt as a fence, and which stores each change's
// events in the change's transaction. It owns no run state either: the run manager decides
// statuses, leases and recovery.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// Hub is what the engine writes through; every call is fenced by the run's attempt. Each write
// stores the events that report it in its own transaction, and returns them stored (seq and time
// set) for the engine to yield: a change and its event commit together or not at all, and no
// change can be made without its event.
type Hub interface {
	// AppendMessages appends messages for the run (the summary of cut history) with their
	// message.appended event.
	AppendMessages(ctx context.Context, run *carryon.Run, msgs []carryon.NewMessage) ([]carryon.Event, error)
	// Compact stores the run's compaction of its session under requestID (one per step: the
	// same id for every attempt), with its message.appended event: when the id was used already
	// (an earlier attempt of the step compacted) it stores nothing and returns no event without
	// calling plan; else plan prepares the summary outside any transaction, and nothing is stored
	// when it fails (its error is returned).
	Compact(ctx context.Context, run *carryon.Run, requestID string, plan func(context.Context) (carryon.NewMessage, error)) ([]carryon.Event, error)
	// WorkingMemoryPreview returns the session's working memory as it will be once the merge
	// patches are applied in order, storing nothing (the step's patches are stored by CommitStep).
	WorkingMemoryPreview(ctx context.Context, run *carryon.Run, patches []json.RawMessage) (carryon.WorkingMemory, error)
	// PlanStep stores the model's answer that calls tools: the call's text deltas (model.delta
	// events), the assistant message and its calls as pending actions, and message.appended.
	PlanStep(ctx context.Context, run *carryon.Run, p Plan) ([]carryon.Event, error)
	// StepActions returns the journaled actions of one step of the run, by index.
	StepActions(ctx context.Context, run *carryon.Run, step int) ([]*carryon.Action, error)
	// StartAction journals a call as started with its tool.started event, durably, right before
	// it runs, and renews the run's lease in the same transaction. done, when not nil, is the
	// call that ran before it in the step: its outcome and tool.finished are journaled first, in
	// the same transaction.
	StartAction(ctx context.Context, run *carryon.Run, done, a *carryon.Action) ([]carryon.Event, error)
	// FinishAction journals how a call ended with its tool.finished event, or that it waits (for
	// a client's output or a user's approval; no event: the run's end reports it).
	FinishAction(ctx context.Context, run *carryon.Run, a *carryon.Action) ([]carryon.Event, error)
	// CommitStep stores the step's checkpoint in one transaction: the outcome of its last call
	// (Commit.Done, tool.finished), the text deltas of a final answer, the working memory
	// changes its tools made (merge patches, applied in order; one memory.updated when the
	// memory changed), its last messages (message.appended), and the run's step, usage and, for
	// the final answer, its reply (the Hub may end the run in the same transaction: the final
	// answer is the run's last write).
	CommitStep(ctx context.Context, run *carryon.Run, c Commit) ([]carryon.Event, error)
	// StopRequested says whether the run was asked to stop: "", "cancel" or "interrupt".
	StopRequested(ctx context.Context, run *carryon.Run) (string, error)
	// CheckBudget is asked before every model call (a step boundary, never inside a tool call):
	// a *carryon.BudgetStop when a budget of the run's session or user is spent, which ends the
	// run (the run manager pauses or fails it, as the budget says).
	CheckBudget(ctx context.Context, run *carryon.Run) error
	// Preview hands a model delta that is not stored yet to the run's live followers; the next
	// PlanStep or CommitStep stores it, with the same data, among its Deltas. It stores nothing
	// and cannot fail.
	Preview(ctx context.Context, run *carryon.Run, ev carryon.Event)
}

// SessionJournal is implemented by a Hub that reads a session's earlier tool calls: a tool that
// keeps its state in the journal (tool.Call.Journal) finds it there.
type SessionJournal interface {
	// LastToolAction returns the newest call of the tool called name in the run's session that
	// recorded a fingerprint after it, or nil when there is none.
	LastToolAction(ctx context.Context, run *carryon.Run, name string) (*carryon.Action, error)
}

// Plan is what PlanStep stores: the model's answer with tool calls.
type Plan struct {
	// Deltas are the data of the model call's model.delta events, in order.
	Deltas []json.RawMessage
	// Assistant is the model's message, its tool calls included.
	Assistant carryon.NewMessage
	// Actions are the calls, pending; the first one started when the engine runs it right after
	// (its tool.started follows message.appended, and the transaction renews the run's lease,
	// as StartAction's does).
	Actions []*carryon.Action
	// Usage is what the step's model calls used (the call and any summary or compaction before
	// it): its spend is recorded in the same transaction.
	Usage carryon.Usage
	// CachedTokens is the part of the call's input the provider read from its prompt cache.
	CachedTokens int
}

// Commit is what CommitStep stores: the end of a step.
type Commit struct {
	// Done is the step's last call that ran, whose outcome is journaled first (tool.finished),
	// or nil.
	Done *carryon.Action
	// Deltas are the data of the model call's model.delta events when the step is the final
	// answer (a step with tool calls stored them with its Plan).
	Deltas []json.RawMessage
	// Messages are the step's last messages: the tool results, or the final answer.
	Messages []carryon.NewMessage
	// Patches are the working memory changes of the step's update_working_memory calls.
	Patches []json.RawMessage
	// Usage is what the step's model calls used when the step is the final answer (a step with
	// tool calls recorded it with its Plan): its spend is recorded in the same transaction.
	Usage carryon.Usage
	// CachedTokens is the part of the call's input the provider read from its prompt cache.
	CachedTokens int
}

// Config shapes the loop.
type Config struct {
	// Model is the model name passed to the provider and the tokenizer.
	Model string
	// CompactThreshold, when more than 0, is the automatic compaction's threshold: before a model
	// call whose context holds more tokens, the run compacts the session (compact.go).
	CompactThreshold int
	// MaxSteps bounds the model calls of one run (default 12).
	MaxSteps int
	// TokenBudget bounds the tokens (input and output) one run may use; 0 means no bound.
	TokenBudget int
	// Workspaces is the directory holding each session's workspace directory.
	Workspaces string
	// DeltaEvery coalesces model deltas into one event at most this often (default 100ms).
	DeltaEvery time.Duration
	// LongTerm is the users' long-term memory, handed to tools (remember, recall); nil for none.
	LongTerm carryon.LongTermService
	// Now is the clock of the journal's times (default time.Now); the coalescing of model deltas
	// (DeltaEvery) runs on the wall clock.
	Now func() time.Time
	// Approval says whether a tool asks for a user's approval before every call (an agent
	// profile's "approval: always"); nil asks for none.
	Approval func(tool string) bool
	// Telemetry traces each journaled tool call (execute_tool) and counts it; nil for none.
	// (Model calls are traced by the provider Telemetry.Provider wraps.)
	Telemetry *telemetry.Telemetry
	// Logger receives what a run goes on after (an automatic compaction that did not compact);
	// nil discards it.
	Logger *slog.Logger
}

// Engine runs the agent loop.
type Engine struct {
	cfg      Config
	provider model.Provider
	tools    *tool.Registry
	builder  *contextbuild.Builder
}

// New returns an engine.
func New(cfg Config, provider model.Provider, tools *tool.Registry, builder *contextbuild.Builder) *Engine {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 12
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DeltaEvery <= 0 {
		cfg.DeltaEvery = 100 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Engine{cfg: cfg, provider: provider, tools: tools, builder: builder}
}

func (e *Engine) now() time.Time { return e.cfg.Now().UTC().Truncate(time.Microsecond) }

// Model returns the model name the engine runs with.
func (e *Engine) Model() string { return e.cfg.Model }

// Builder returns the context builder.
func (e *Engine) Builder() *contextbuild.Builder { return e.builder }

// Tools returns the tool registry.
func (e *Engine) Tools() *tool.Registry { return e.tools }

// Workspace returns the workspace directory of a session.
func (e *Engine) Workspace(sessionID string) string {
	return filepath.Join(e.cfg.Workspaces, sessionID)
}

// ErrStopped is returned when the run was asked to stop (cancel or interrupt).
type ErrStopped struct{ Reason string }

func (e *ErrStopped) Error() string { return "run stopped: " + e.Reason }

// emitFunc yields events the Hub stored with their change. It fails when the consumer stopped
// (errConsumerStopped); the step that called it returns at once.
type emitFunc func(evs []carryon.Event) error

// errConsumerStopped ends a run whose consumer returned false: nothing more is written or yielded.
var errConsumerStopped = errors.New("the consumer of the run's events stopped")

// Run executes run from the step after run.Step (its last checkpoint), yielding each event once the
// Hub has stored it with the change it reports (a model delta is previewed to the run's live
// followers first, and stored and yielded with the step's next write). It ends without an error
// when the model gave its final answer (run.Reply holds it), or with one error: *ErrStopped when
// asked to stop, *carryon.BudgetStop when a budget is spent before a model call, *NeedsApproval when an action cut off by a crash cannot be settled or its tool
// asks for approval, *NeedsOutputs when the model called client tools (the run's NewRun.Tools),
// the Hub's error when a write could not be stored (EFENCED once another runner took the run
// over). It stops at the first failure and as soon as its consumer stops (then it yields nothing
// more). run.Step, run.Usage and run.Reply are kept current.
func (e *Engine) Run(ctx context.Context, hub Hub, run *carryon.Run) iter.Seq2[carryon.Event, error] {
	return func(yield func(carryon.Event, error) bool) {
		emit := func(evs []carryon.Event) error {
			for _, ev := range evs {
				if !yield(ev, nil) {
					return errConsumerStopped
				}
			}
			return nil
		}
		if err := e.run(ctx, hub, run, emit); err != nil && !errors.Is(err, errConsumerStopped) {
			yield(carryon.Event{}, err)
		}
	}
}

// run is the loop of Run: steps until the final answer, a stop, a limit or the first failure.
func (e *Engine) run(ctx context.Context, hub Hub, run *carryon.Run, emit emitFunc) error {
	if run.Reply != "" {
		return nil // the final answer was committed before the runner stopped: nothing is left to do
	}
	// From here on the session's workspace takes writes of this attempt only: a runner paused past
	// its lease that wakes up inside write_file is refused at the file, not only at the database.
	if err := workspace.Claim(e.Workspace(run.SessionID), tool.Fence{RunID: run.ID, Attempt: run.Attempt}); err != nil {
		return fmt.Errorf("claim the session's workspace: %w", err)
	}
	for run.Step < e.cfg.MaxSteps {
		if reason, err := hub.StopRequested(ctx, run); err != nil {
			return err
		} else if reason != "" {
			return &ErrStopped{Reason: reason}
		}
		done, err := e.step(ctx, hub, run, run.Step+1, emit)
		if err != nil || done {
			return err
		}
		if used := run.Usage.InputTokens + run.Usage.OutputTokens; e.cfg.TokenBudget > 0 && used > e.cfg.TokenBudget {
			return fmt.Errorf("the run used %d tokens, over its budget of %d", used, e.cfg.TokenBudget)
		}
	}
	return fmt.Errorf("the run reached its limit of %d steps without a final answer", e.cfg.MaxSteps)
}

// step carries out one step: resumed from the journal when the model already answered it, else
// with a new model call. It returns true when the model ended its turn (run.Reply is its answer).
func (e *Engine) step(ctx context.Context, hub Hub, run *carryon.Run, step int, emit emitFunc) (bool, error) {
	actions, err := hub.StepActions(ctx, run, step)
	if err != nil {
		return false, err
	}
	var fresh *carryon.Action // the call the plan journaled started, to run now (not a crash's)
	if len(actions) == 0 {
		// A step boundary: before the model is asked, never inside a tool call.
		if err := hub.CheckBudget(ctx, run); err != nil {
			return false, err
		}
		before := run.Usage
		resp, deltas, err := e.ask(ctx, hub, run, step, emit)
		if err != nil {
			return false, err
		}
		used := carryon.Usage{InputTokens: run.Usage.InputTokens - before.InputTokens, OutputTokens: run.Usage.OutputTokens - before.OutputTokens}
		resp.Text = storable(resp.Text)
		if len(resp.ToolCalls) == 0 {
			if strings.TrimSpace(resp.Text) == "" {
				return false, errors.New("the model answered with nothing")
			}
			run.Step, run.Reply = step, resp.Text
			evs, err := hub.CommitStep(ctx, run, Commit{Deltas: deltas, Messages: []carryon.NewMessage{{Role: carryon.RoleAssistant, Content: resp.Text}}, Usage: used, CachedTokens: resp.Usage.CachedTokens})
			if err != nil {
				run.Step, run.Reply = step-1, ""
				return false, err
			}
			failpoint.Hit(failpoint.StepCommitted)
			return true, emit(evs)
		}
		actions = e.plan(run, step, resp.ToolCalls)
		first := actions[0]
		if runsAtOnce(first) {
			first.Status = carryon.ActionStarted // journaled with the plan: it runs right after
		}
		evs, err := hub.PlanStep(ctx, run, Plan{Deltas: deltas, Assistant: assistantCall(resp), Actions: actions, Usage: used, CachedTokens: resp.Usage.CachedTokens})
		if err != nil {
			return false, err
		}
		if err := emit(evs); err != nil {
			return false, err
		}
		if first.Status == carryon.ActionStarted {
			failpoint.Hit(failpoint.ActionStarted)
			fresh = first
		}
	}
	msgs, patches, done, err := e.runTools(ctx, hub, run, actions, fresh, emit)
	if err != nil {
		return false, err
	}
	run.Step = step
	evs, err := hub.CommitStep(ctx, run, Commit{Done: done, Messages: msgs, Patches: patches})
	if err != nil {
		run.Step = step - 1
		if jerr := keepOutcome(ctx, hub, run, done, emit); jerr != nil {
			return false, jerr
		}
		return false, err
	}
	if done != nil {
		failpoint.Hit(failpoint.ActionFinished)
	}
	failpoint.Hit(failpoint.StepCommitted)
	return false, emit(evs)
}

// ask builds the context (storing a summary of cut history first, if one is due) and streams one
// model call. It returns the answer and the data of its model.delta events, for the step's next
// write to store.
func (e *Engine) ask(ctx context.Context, hub Hub, run *carryon.Run, step int, emit emitFunc) (model.Response, []json.RawMessage, error) {
	cctx, err := e.builder.Build(ctx, run.SessionID, contextbuild.Options{Model: e.cfg.Model, Summarize: true})
	if err != nil {
		return model.Response{}, nil, fmt.Errorf("build the context: %w", err)
	}
	addUsage(run, cctx.SummaryUsage)
	if cctx.NewSummary != nil {
		evs, err := hub.AppendMessages(ctx, run, []carryon.NewMessage{*cctx.NewSummary})
		if err != nil {
			return model.Response{}, nil, fmt.Errorf("store the summary: %w", err)
		}
		if err := emit(evs); err != nil {
			return model.Response{}, nil, err
		}
	}
	if cctx, err = e.compact(ctx, hub, run, step, cctx, emit); err != nil {
		return model.Response{}, nil, err
	}
	resp, deltas, err := e.callModel(ctx, hub, run, cctx.Request(e.specs(run)), step)
	addUsage(run, carryon.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens})
	return resp, deltas, err
}

// addUsage counts what a model call used in the run's usage: the run's own calls and the
// summarizer's, which a run asks for its cut history and its compactions.
func addUsage(run *carryon.Run, u carryon.Usage) {
	run.Usage.InputTokens += u.InputTokens
	run.Usage.OutputTokens += u.OutputTokens
}

// callModel streams one model call. Its text is coalesced into deltas of at most one a
// DeltaEvery, each with the time its first piece arrived (a step's first delta tells when its
// first token came), each previewed to the run's live followers at once and returned for the
// step's next write to store; a provider's error is named after the provider.
func (e *Engine) callModel(ctx context.Context, hub Hub, run *carryon.Run, req model.Request, step int) (model.Response, []json.RawMessage, error) {
	var resp model.Response
	var deltas []json.RawMessage
	var pending strings.Builder
	var at time.Time // when the pending text's first piece arrived
	last, first := time.Now(), true
	flush := func() {
		last = time.Now()
		if pending.Len() == 0 {
			return
		}
		b, _ := json.Marshal(deltaData{Step: step, Text: pending.String(), At: at})
		pending.Reset()
		deltas = append(deltas, b)
		hub.Preview(ctx, run, carryon.Event{RunID: run.ID, Type: carryon.EventModelDelta, Data: b, CreatedAt: e.now()})
	}
	for c, err := range e.provider.Stream(ctx, req) {
		if err != nil {
			flush()
			if _, named := model.AsError(err); !named {
				err = fmt.Errorf("model %s: %w", e.provider.Name(), err)
			}
			return resp, deltas, err // a *model.Error names its provider itself
		}
		if first {
			first = false
			failpoint.Hit(failpoint.ModelCall)
		}
		if c.Delta != "" {
			resp.Text += c.Delta
			if pending.Len() == 0 {
				at = e.now()
			}
			pending.WriteString(c.Delta)
			if time.Since(last) >= e.cfg.DeltaEvery {
				flush()
			}
		}
		resp.ToolCalls = append(resp.ToolCalls, c.ToolCalls...)
		if c.Usage != nil {
			resp.Usage = *c.Usage
		}
		if c.FinishReason != "" {
			resp.FinishReason = c.FinishReason
		}
	}
	flush()
	return resp, deltas, nil
}

// deltaData is the data of a model.delta event: At is when the first piece of its text arrived.
type deltaData struct {
	Step int       `json:"step"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// specs are the tools offered to the model in a run: the engine's, then the run's client tools.
func (e *Engine) specs(run *carryon.Run) []model.ToolSpec {
	var out []model.ToolSpec
	for _, s := range e.tools.Specs() {
		out = append(out, model.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	for _, t := range run.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}

func assistantCall(resp model.Response) carryon.NewMessage {
	calls := make([]carryon.ToolCall, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		calls[i] = carryon.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	b, _ := json.Marshal(calls)
	return carryon.NewMessage{Role: carryon.RoleAssistant, Content: resp.Text, ToolCalls: b}
}
