// Package tool owns what the agent can call: the Tool interface, the effect class each tool
// declares for recovery, the Registry that validates a call's arguments against the tool's JSON
// Schema before running it, and the built-in update_working_memory tool.
//
// It must not journal, retry or decide how a failure is shown: the engine records every call in the
// action journal and asks a Reconciler, by the tool's effect class, whether a call that was cut off
// took effect. Tools never write to the database themselves; working memory goes through the
// WorkingMemoryEditor the caller hands in, and a tool reads its own earlier calls only through the
// Journal the caller hands in.
package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/carryon-hub/carryon"
)

// Tool is a capability the agent can call.
type Tool interface {
	// Name is the name the model calls the tool by; unique in a Registry.
	Name() string
	// Description tells the model what the tool does and when to use it.
	Description() string
	// Schema is the JSON Schema (an object schema) of the arguments.
	Schema() json.RawMessage
	// Effect says what running the tool again does to the world; recovery decides by it.
	Effect() carryon.EffectClass
	// Call runs the tool once.
	Call(ctx context.Context, c Call) (Result, error)
}

// Source offers tools that are found at run time rather than compiled in, such as an MCP server's.
// The engine asks it at the start of each run; what it answers may change between runs (a server
// that says its list changed), never within one.
type Source interface {
	// Tools returns the tools offered now. An error means the source cannot be reached; the caller
	// decides whether a run goes on without those tools.
	Tools(ctx context.Context) ([]Tool, error)
}

// Checker is implemented by a Source that can tell whether it is reachable without a call, such
// as a remote A2A agent whose card it reads: `carryon agents check` reports its error.
type Checker interface {
	// Check reaches the source; its error says why it cannot be reached.
	Check(ctx context.Context) error
}

// Reconciler is implemented by reconcilable tools: it checks the world to tell whether a call that
// was cut off took effect.
type Reconciler interface {
	// Reconcile answers Applied, NotApplied or Unknown for c; on an error the outcome is Unknown and
	// the error says why the world could not be checked.
	Reconcile(ctx context.Context, c Call) (Outcome, error)
}

// Outcome is a Reconciler's answer: did the interrupted call take effect?
type Outcome string

// Outcomes of Reconcile.
const (
	// Applied means the call took effect: record it as succeeded without running it again.
	Applied Outcome = "applied"
	// NotApplied means the world is as if the call never ran: run it again.
	NotApplied Outcome = "not_applied"
	// Unknown means the tool cannot tell: treat the call as unsafe.
	Unknown Outcome = "unknown"
)

// Call is one invocation.
type Call struct {
	// Args are the arguments as JSON, an object matching the tool's Schema.
	Args json.RawMessage
	// SessionID is the session the call runs for.
	SessionID string
	// RunID is the run that made the call.
	RunID string
	// IdempotencyKey is run_id/step/index, the same for every attempt of the call.
	IdempotencyKey string
	// Workspace is the session's workspace directory (created on demand by the tools that need it).
	Workspace string
	// WorkingMemory changes the session's working memory; nil when the caller offers none.
	WorkingMemory WorkingMemoryEditor
	// OwnerID is the session's owner: the user the call acts for.
	OwnerID string
	// LongTerm is the long-term memory service; nil when the caller offers none. It serves the
	// user in the call's context, which must be OwnerID (tool/longtermtool checks).
	LongTerm carryon.LongTermService
	// Journal reads the earlier calls of this tool in the session; nil when the caller offers
	// none.
	Journal Journal
	// Fence is the run attempt the call belongs to; a tool that changes a fenced resource (the
	// workspace) refuses a call whose attempt is no longer the one allowed to write there.
	Fence Fence
}

// Journal is what a tool reads of its own earlier calls in a session: a tool that keeps state
// between calls (a remote A2A agent's conversation) records it as its result's FingerprintAfter,
// which the journal stores with the call, and finds it there at the next call, even after a
// restart.
type Journal interface {
	// LastFingerprint returns the FingerprintAfter of the newest earlier call of the tool in the
	// session that recorded one, or "" when there is none.
	LastFingerprint(ctx context.Context) (string, error)
}

// Fence is a fencing token: the run attempt a call belongs to. A runner that was paused past its
// lease still carries its old attempt, so a resource that records the newest attempt can refuse
// the stale runner's effects. The zero Fence means unfenced, e.g. a direct call in tests.
type Fence struct {
	// RunID is the run the call was made for.
	RunID string
	// Attempt is the run's attempt (carryon.Run.Attempt) the caller holds; 1 or more when set.
	Attempt int
}

// IsZero reports whether f is the zero Fence (an unfenced call).
func (f Fence) IsZero() bool { return f == Fence{} }

// WorkingMemoryEditor applies a JSON Merge Patch to the session's working memory and returns the
// result. The engine's editor stages the change: it is stored with the step's results, in the
// step's checkpoint.
type WorkingMemoryEditor interface {
	// PatchWorkingMemory applies patch (RFC 7396) and returns the new document.
	PatchWorkingMemory(ctx context.Context, patch json.RawMessage) (carryon.WorkingMemory, error)
}

// Result is what a call returns to the model, with fingerprints of the resource it touched.
type Result struct {
	// Content is the text sent back to the model as the tool result.
	Content string
	// FingerprintBefore identifies the state of the resource before the call ("" when not known).
	FingerprintBefore string
	// FingerprintAfter identifies the state of the resource after the call ("" when not known).
	FingerprintAfter string
}

// Fingerprint returns "sha256:" followed by the hex SHA-256 of b.
func Fingerprint(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
