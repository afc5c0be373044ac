package carryon

import (
	"encoding/json"
	"time"
)

// EffectClass says what running a tool again does to the world; recovery decides by it.
type EffectClass string

// Effect classes, from safest to least safe.
const (
	// EffectRead has no side effect: run it again.
	EffectRead EffectClass = "read"
	// EffectIdempotent takes the action's idempotency key and dedupes: run it again with the same key.
	EffectIdempotent EffectClass = "idempotent"
	// EffectReconcilable can check the world to tell whether it happened (e.g. a file's hash).
	EffectReconcilable EffectClass = "reconcilable"
	// EffectUnsafe cannot be known: a user decides.
	EffectUnsafe EffectClass = "unsafe"
)

// ActionStatus is the state of one journaled tool call.
type ActionStatus string

// Action states. pending is journaled with the model's answer, before any tool of the step runs;
// started is journaled durably right before the tool runs; the outcome after.
const (
	ActionPending   ActionStatus = "pending"
	ActionStarted   ActionStatus = "started"
	ActionSucceeded ActionStatus = "succeeded"
	ActionFailed    ActionStatus = "failed"
	ActionUnknown   ActionStatus = "unknown"
	ActionSkipped   ActionStatus = "skipped"
	// ActionWaiting has not run and waits for someone outside the run: the client's output (a
	// client tool, Executor "client") or a user's approval (Approval "required").
	ActionWaiting ActionStatus = "waiting"
)

// Executor says who runs an action (Action.Executor).
type Executor string

// Executors.
const (
	// ExecutorServer is carryon itself (the empty value).
	ExecutorServer Executor = ""
	// ExecutorClient is the client that declared the tool (NewRun.Tools).
	ExecutorClient Executor = "client"
)

// ApprovalState is where an action whose tool asks for approval before every call stands
// (Action.Approval).
type ApprovalState string

// Approval states.
const (
	ApprovalRequired ApprovalState = "required"
	ApprovalApproved ApprovalState = "approved"
	// ApprovalEdited is approved with arguments the user changed (Action.OriginalArgs keeps the
	// model's).
	ApprovalEdited   ApprovalState = "edited"
	ApprovalRejected ApprovalState = "rejected"
)

// Action is one tool call in the journal (the seed's tool_history): what was asked, with what
// effect class, what the world looked like before and after, and how it ended.
type Action struct {
	ID        string `json:"id"`
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Step      int    `json:"step"`
	Index     int    `json:"index"`
	Attempt   int    `json:"attempt"`
	// CallID is the model's id of the tool call, which the tool result message refers to.
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Effect EffectClass     `json:"effect"`
	Status ActionStatus    `json:"status"`
	// Executor is "client" for a client tool's call, empty when carryon runs it.
	Executor Executor `json:"executor,omitempty"`
	// Approval is set for a tool that asks for approval before every call: required, approved,
	// edited or rejected.
	Approval ApprovalState `json:"approval,omitempty"`
	// OriginalArgs are the model's arguments when the user edited them on approval (Args are
	// the ones that ran).
	OriginalArgs json.RawMessage `json:"original_args,omitempty"`
	// IdempotencyKey is run_id/step/index: the same for every attempt of this call.
	IdempotencyKey    string     `json:"idempotency_key"`
	FingerprintBefore string     `json:"fingerprint_before,omitempty"`
	FingerprintAfter  string     `json:"fingerprint_after,omitempty"`
	Result            string     `json:"result,omitempty"`
	Error             string     `json:"error,omitempty"`
	StartedAt         time.Time  `json:"started_at"`
	FinishedAt        *time.Time `json:"finished_at,omitempty"`
}
