package carryon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// RunStatus is the state of a run. queued → running → succeeded | failed | cancelled |
// interrupted, with waiting_approval while a user must decide about an action and
// requires_action while the client must run its own tools (Run.RequiredAction).
type RunStatus string

// Run states.
const (
	RunQueued          RunStatus = "queued"
	RunRunning         RunStatus = "running"
	RunWaitingApproval RunStatus = "waiting_approval"
	RunRequiresAction  RunStatus = "requires_action"
	RunSucceeded       RunStatus = "succeeded"
	RunFailed          RunStatus = "failed"
	RunCancelled       RunStatus = "cancelled"
	RunInterrupted     RunStatus = "interrupted"
)

// Active reports whether a run in this state holds its session (no other run may start).
func (s RunStatus) Active() bool {
	return s == RunQueued || s == RunRunning || s.Waiting()
}

// Waiting reports whether a run in this state waits for someone outside it (a user's decision or
// a client's tool outputs): no runner holds it, and it holds its session.
func (s RunStatus) Waiting() bool { return s == RunWaitingApproval || s == RunRequiresAction }

// Terminal reports whether a run in this state will never change again.
func (s RunStatus) Terminal() bool {
	return s == RunSucceeded || s == RunFailed || s == RunCancelled || s == RunInterrupted
}

// Door names the way a run came in: the API or protocol its start was a request of, or the
// component that started it. The Run.Door of every run says which.
type Door string

// The doors.
const (
	// DoorAPI is the native /v1 API (and the CLI and the Go client, which speak it).
	DoorAPI Door = "api"
	// DoorOpenAI is the OpenAI-compatible Responses API (/v1/responses).
	DoorOpenAI Door = "openai"
	// DoorMCP is the MCP server, over HTTP at /mcp or over stdio (carryon mcp).
	DoorMCP Door = "mcp"
	// DoorAGUI is the AG-UI endpoint (/v1/ag-ui).
	DoorAGUI Door = "ag-ui"
	// DoorAISDK is the Vercel AI SDK chat endpoint (/v1/ai-sdk/chat).
	DoorAISDK Door = "ai-sdk"
	// DoorA2A is the A2A JSON-RPC endpoint.
	DoorA2A Door = "a2a"
	// DoorSchedule is a schedule's tick, or a schedule run now by hand.
	DoorSchedule Door = "schedule"
	// DoorLibrary is a call of the services in process (package hub), through no front door.
	DoorLibrary Door = "library"
)

// Doors lists every door, in the order the documentation names them.
var Doors = []Door{DoorAPI, DoorOpenAI, DoorMCP, DoorAGUI, DoorAISDK, DoorA2A, DoorSchedule, DoorLibrary}

type doorKey struct{}

// NewContextWithDoor returns a context that says the request came in through door d: a run
// started with it records d (Run.Door).
func NewContextWithDoor(ctx context.Context, d Door) context.Context {
	return context.WithValue(ctx, doorKey{}, d)
}

// DoorFromContext returns the door of ctx (NewContextWithDoor), DoorLibrary when it names none.
func DoorFromContext(ctx context.Context) Door {
	if d, ok := ctx.Value(doorKey{}).(Door); ok && d != "" {
		return d
	}
	return DoorLibrary
}

// Multitask is what a new run does while another run holds the session.
type Multitask string

// Multitask policies.
const (
	MultitaskReject    Multitask = "reject"
	MultitaskEnqueue   Multitask = "enqueue"
	MultitaskInterrupt Multitask = "interrupt"
)

// Usage counts model tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Run is one execution of the agent on a session, triggered by one user message. Every write a
// run makes carries its Attempt: a write from an older attempt is refused (fencing).
type Run struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	OwnerID   string    `json:"owner_id"`
	Status    RunStatus `json:"status"`
	// Message is the user's message that started the run. It is appended to the session when the
	// run starts (at once, or when an enqueued run's turn comes), so a run never sees a later
	// run's message; TriggerSeq is its seq, 0 until then. A run that continues its input after a
	// tool output (NewRun.Message empty) has no message: TriggerSeq is its input's last message.
	Message    string    `json:"message"`
	TriggerSeq int64     `json:"trigger_seq"`
	RequestID  string    `json:"request_id,omitempty"`
	Model      string    `json:"model"`
	Multitask  Multitask `json:"multitask"`
	// Agent is the agent profile the run executes; AgentDigest the digest of that profile's
	// definition when a runner last took the run (carryon.Agent.Digest), so the run says what ran.
	Agent       string `json:"agent"`
	AgentDigest string `json:"agent_digest"`
	// Step is the number of model calls made so far; Attempt the number of times a runner took the run.
	Step           int        `json:"step"`
	Attempt        int        `json:"attempt"`
	LeaseOwner     string     `json:"lease_owner,omitempty"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at,omitempty"`
	// StopRequested is "cancel" or "interrupt" once someone asked the run to stop; the runner
	// stops at its next checkpoint.
	StopRequested string `json:"stop_requested,omitempty"`
	// Takeovers counts the times a runner took the run over after its runner's lease ran out (a
	// crash or a pause); hand-offs at shutdown and after approvals do not count.
	Takeovers int `json:"takeovers"`
	// Tools are the client-side tools the run may call (NewRun.Tools).
	Tools []ClientTool `json:"tools,omitempty"`
	// CompactThreshold is the run's own automatic compaction threshold (NewRun.CompactThreshold),
	// 0 when the run compacts as its profile says.
	CompactThreshold int `json:"compact_threshold,omitempty"`
	// Door is the front door the run was started through (DoorFromContext of its start), stored
	// with it so that every instance and every later read says who started it. Empty for a run
	// stored before carryon kept it.
	Door Door `json:"door,omitempty"`
	// RequiredAction lists the client tool calls the run waits for, while it is requires_action.
	RequiredAction *RequiredAction `json:"required_action,omitempty"`
	// PendingAction is the action a waiting_approval run waits for a decision on: a call whose
	// tool asks for approval, with the arguments the model proposed, or a call a crash cut off.
	PendingAction *Action `json:"pending_action,omitempty"`
	// BudgetStop says, while a run waits in waiting_approval because a budget of its session or
	// user is spent (reason budget_exceeded), or after it failed for that, which budget, its
	// limit and what was spent. Approving the run (RunService.Approve, no action id) continues it;
	// it pauses again at once unless the budget was raised.
	BudgetStop *BudgetStop `json:"budget_stop,omitempty"`
	// Reply is the final assistant answer of a succeeded run.
	Reply      string     `json:"reply,omitempty"`
	Error      string     `json:"error,omitempty"`
	Usage      Usage      `json:"usage"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// TraceID is the id of the run's trace (RunTraceID of its id): with tracing on, the spans of
	// every attempt of the run, on any instance, are in this trace. It is filled in when the run
	// is encoded as JSON; nothing stores it.
	TraceID string `json:"trace_id,omitempty"`
}

// MarshalJSON encodes the run with its TraceID.
func (r Run) MarshalJSON() ([]byte, error) {
	type plain Run
	p := plain(r)
	if p.ID != "" {
		p.TraceID = RunTraceID(p.ID)
	}
	return json.Marshal(p)
}

// RunTraceID is the W3C trace id (32 lowercase hex digits) of the run with this id: the first 16
// bytes of the SHA-256 of "carryon run " and the id. A run's trace id follows from its id alone,
// so every attempt of the run, on any instance and after any restart, traces into one trace that
// the run's answer names, without storing anything.
func RunTraceID(runID string) string {
	sum := sha256.Sum256([]byte("carryon run " + runID))
	return hex.EncodeToString(sum[:16])
}

// NewRun is the input of RunService.Start.
type NewRun struct {
	// Message is the user's message that starts the run. It may be empty when Input ends with a
	// tool message: the run then continues the history after that tool output (the model answers
	// it), as a compatible front door's stateless request that sends a function call and its
	// output back does; no user message is appended.
	Message string `json:"message"`
	// Multitask says what to do when the session has an active run: reject (default), enqueue or interrupt.
	Multitask Multitask `json:"multitask,omitempty"`
	// Tools are function tools the client runs itself: when the model calls one, the run stops in
	// requires_action until the client posts the outputs (RunService.SubmitToolOutputs).
	Tools []ClientTool `json:"tools,omitempty"`
	// Agent names the agent profile to run (default: the session's); EINVALID for an unknown one.
	Agent string `json:"agent,omitempty"`
	// Input are messages appended right before the user's message, in the same transaction (a
	// compatible front door's input items). Only a run that starts at once takes them: with
	// Input, the multitask policy must be reject.
	Input []NewMessage `json:"input,omitempty"`
	// Metadata is the client's JSON about the run, kept as it came in the run's first event
	// (run.queued, under "metadata"); carryon does not read it.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// CompactThreshold, when more than 0, is the run's automatic compaction threshold in tokens,
	// in place of its profile's (docs/AGENTS.md, "Automatic compaction"): before each model call
	// whose context holds more, the session is compacted. At most MaxCompactThreshold.
	CompactThreshold int `json:"compact_threshold,omitempty"`
	WriteOptions
}

// MaxCompactThreshold bounds NewRun.CompactThreshold, in tokens.
const MaxCompactThreshold = 10_000_000

// Limits of client-side tools.
const (
	// MaxClientTools bounds the client tools of one run.
	MaxClientTools = 64
	// MaxClientToolBytes bounds one client tool's definition (name, description, parameters).
	MaxClientToolBytes = 32 << 10
	// MaxToolOutputBytes bounds one output a client posts for a tool call.
	MaxToolOutputBytes = 64 << 10
	// DefaultToolOutputTimeout is how long a run waits for a client's tool outputs before it fails.
	DefaultToolOutputTimeout = 24 * time.Hour
)

// ClientTool is a function tool the client executes: its name (^[a-zA-Z0-9_-]{1,64}$, not a
// server tool's), what it does, and the JSON Schema (an object schema) of its arguments.
type ClientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// RequiredAction is what a requires_action run waits for: outputs for these calls.
type RequiredAction struct {
	ToolCalls []RequiredToolCall `json:"tool_calls"`
}

// RequiredToolCall is one call of a client tool the model made.
type RequiredToolCall struct {
	// CallID is the model's id of the call; the output names it.
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolOutputs is the input of RunService.SubmitToolOutputs: one output per pending call.
type ToolOutputs struct {
	Outputs []ToolOutput `json:"outputs"`
	RetryOptions
}

// ToolOutput is what the client's tool returned for one call; the model gets it as the result.
type ToolOutput struct {
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// RunFilter pages through a session's runs, newest first.
type RunFilter struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// RunPage is one page of runs.
type RunPage struct {
	Items      []*Run `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// ChatInput is the seed's short path: a message to a session, which is created when no id is given.
type ChatInput struct {
	SessionID string `json:"session_id,omitempty"`
	Message   string `json:"message"`
	RequestID string `json:"request_id,omitempty"`
	// ExpectedVersion, with SessionID, refuses the chat with EVERSION unless the session is at
	// that version (as NewRun's). A chat without SessionID makes a new session and takes none.
	ExpectedVersion *int64 `json:"expected_version,omitempty"`
	// Tools are client-side tools, as NewRun's: a chat whose run stops in requires_action
	// answers at once with that status and the run's required action.
	Tools []ClientTool `json:"tools,omitempty"`
	// Agent names the agent profile of the run (default: the session's); a new session is bound to it.
	Agent string `json:"agent,omitempty"`
}

// ChatResult is the answer to a chat once its run has ended.
type ChatResult struct {
	SessionID     string        `json:"session_id"`
	RunID         string        `json:"run_id"`
	Status        RunStatus     `json:"status"`
	Reply         string        `json:"reply"`
	Error         string        `json:"error,omitempty"`
	WorkingMemory WorkingMemory `json:"working_memory"`
	// RequiredAction is set when Status is requires_action.
	RequiredAction *RequiredAction `json:"required_action,omitempty"`
}

// Decision is what a user decides about an action a run waits on (Approval.Decision).
type Decision string

// Decisions on an action that waits for approval.
const (
	// DecisionRerun runs the action again.
	DecisionRerun Decision = "rerun"
	// DecisionMarkDone counts the action as done without running it.
	DecisionMarkDone Decision = "mark_done"
	// DecisionSkip skips the action; the model is told it was skipped by the user.
	DecisionSkip Decision = "skip"
	// DecisionApprove runs an action whose tool asks for approval before every call, with
	// Approval.Arguments instead of the model's when given.
	DecisionApprove Decision = "approve"
	// DecisionReject does not run such an action; the model is told "rejected by the user" and
	// Approval.Reason.
	DecisionReject Decision = "reject"
)

// Approval is the input of RunService.Approve: a decision on an action of a waiting run.
type Approval struct {
	// ActionID names the action decided; a run that waits because a budget is spent
	// (Run.BudgetStop) takes approve without one.
	ActionID string   `json:"action_id,omitempty"`
	Decision Decision `json:"decision"`
	// Result is what the model is told for mark_done (default "marked done by the user"); with
	// another decision it is refused.
	Result string `json:"result,omitempty"`
	// Arguments replace the model's arguments of an approved call (a JSON object); the journal
	// keeps the model's as Action.OriginalArgs.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason is told to the model with a rejection; with another decision it is refused.
	Reason string `json:"reason,omitempty"`
	RetryOptions
}

// RunService starts runs and reports on them. The caller is the user in the context; runs of
// another user's sessions are ENOTFOUND.
type RunService interface {
	// Start appends the user message and queues a run on the session. A repeat with the same
	// request id returns the same run and stores nothing. ENOTFOUND, EINVALID, EVERSION, EBUSY,
	// ECLOSED, EEXPIRED, EKEYREUSED.
	Start(ctx context.Context, sessionID string, in NewRun) (*Run, error)
	// GetRun returns a run. ENOTFOUND.
	GetRun(ctx context.Context, runID string) (*Run, error)
	// ListRuns lists a session's runs, newest first. ENOTFOUND.
	ListRuns(ctx context.Context, sessionID string, f RunFilter) (*RunPage, error)
	// Cancel stops a run at its next step; a finished run is returned unchanged. A repeat with
	// the same request id answers the first answer. ENOTFOUND, EKEYREUSED.
	Cancel(ctx context.Context, runID string, opt RetryOptions) (*Run, error)
	// Events returns the run's events after seq afterSeq, waiting for new ones until the run
	// ends or ctx is done when follow is true. ENOTFOUND.
	Events(ctx context.Context, runID string, afterSeq int64, follow bool) (EventStream, error)
	// Actions returns the run's tool journal in order. ENOTFOUND.
	Actions(ctx context.Context, runID string) ([]*Action, error)
	// Approve decides an action a waiting run stopped on and queues the run to continue. A
	// repeat with the same request id answers the first answer and decides nothing again.
	// A run whose session is closed or expired is refused before anything is decided, and ends
	// failed with that reason. ENOTFOUND, EINVALID, ECONFLICT (the run is not waiting for that
	// action), ECLOSED, EEXPIRED, EKEYREUSED.
	Approve(ctx context.Context, runID string, in Approval) (*Run, error)
	// SubmitToolOutputs answers every pending client tool call of a requires_action run and
	// queues it to continue. A repeat with the same request id answers the first answer.
	// Outputs for a run whose session is closed or expired are refused, and the run ends failed
	// with that reason. ENOTFOUND, EINVALID (a call missing, unknown or answered twice), ECONFLICT
	// (the run does not wait for outputs), ECLOSED, EEXPIRED, EKEYREUSED.
	SubmitToolOutputs(ctx context.Context, runID string, in ToolOutputs) (*Run, error)
	// Chat sends a message to a session (creating it when SessionID is empty), waits for the run
	// to end and returns the reply. A repeat with the same request id answers the first answer
	// byte for byte once the run has ended (and waits for the run before). The errors of Start.
	Chat(ctx context.Context, in ChatInput) (*ChatResult, error)
}
