// Package bundle is the portable form of one session (docs/EXPORT.md): JSON Lines, a header
// first, then one line per row the session owns (the session, a fork reference, messages,
// tombstones, working-memory revisions, runs, their journal and events, workspace files), and
// a last line with the SHA-256 of every line before it and how many lines of each kind there
// are. Encoder writes it; Decode reads it back and refuses a bundle that is truncated, tampered
// with, of a newer version, over MaxBytes or with a line it does not know.
//
// The package knows the format only: what a session's rows mean, which ids a bundle may bring
// and how they are stored is the sessions service's.
package bundle

import (
	"encoding/json"
	"time"

	"github.com/carryon-hub/carryon"
)

// The header's format name and the version this code writes and reads (and every one before it:
// version 2 added the session's budget).
const (
	Format  = "carryon.session"
	Version = 2
)

// MaxBytes is the largest bundle carryon exports or imports: 64 MiB.
const MaxBytes = 64 << 20

// The kinds of the lines between the header and the end line, in the order they are written.
const (
	KindSession   = "session"
	KindFork      = "fork"
	KindMessage   = "message"
	KindTombstone = "tombstone"
	KindRevision  = "working_memory_revision"
	KindRun       = "run"
	KindAction    = "action"
	KindEvent     = "event"
	KindFile      = "file"
	KindEnd       = "end"
)

// Kinds lists the kinds of the body lines, in their order in a bundle.
var Kinds = []string{KindSession, KindFork, KindMessage, KindTombstone, KindRevision, KindRun, KindAction, KindEvent, KindFile}

// Header is the first line.
type Header struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exported_at"`
	SessionID  string    `json:"session_id"`
}

// Line is every line after the header: its kind and the one field of that kind.
type Line struct {
	Kind      string                         `json:"kind"`
	Session   *Session                       `json:"session,omitempty"`
	Fork      *Fork                          `json:"fork,omitempty"`
	Message   *carryon.Message               `json:"message,omitempty"`
	Tombstone *Tombstone                     `json:"tombstone,omitempty"`
	Revision  *carryon.WorkingMemoryRevision `json:"revision,omitempty"`
	Run       *Run                           `json:"run,omitempty"`
	Action    *carryon.Action                `json:"action,omitempty"`
	Event     *carryon.Event                 `json:"event,omitempty"`
	File      *File                          `json:"file,omitempty"`
	// SHA256 and Counts are the end line's.
	SHA256 string           `json:"sha256,omitempty"`
	Counts map[string]int64 `json:"counts,omitempty"`
}

// Session is the session's row, without its owner (an import gives it to the caller).
type Session struct {
	ID                   string                `json:"id"`
	ExternalID           string                `json:"external_id,omitempty"`
	Title                string                `json:"title"`
	TitleDerived         bool                  `json:"title_derived,omitempty"`
	Status               carryon.SessionStatus `json:"status"`
	Version              int64                 `json:"version"`
	Agent                string                `json:"agent"`
	CreatedAt            time.Time             `json:"created_at"`
	UpdatedAt            time.Time             `json:"updated_at"`
	LastActiveAt         time.Time             `json:"last_active_at"`
	ExpiresAt            time.Time             `json:"expires_at"`
	IdleTTLSeconds       int64                 `json:"idle_ttl_seconds"`
	MessageCount         int64                 `json:"message_count"`
	LastSeq              int64                 `json:"last_seq"`
	WorkingMemoryVersion int64                 `json:"memory_version"`
	Metadata             json.RawMessage       `json:"metadata,omitempty"`
	// Budget is the session's budget, when it has one (version 2; docs/API.md, "Budgets").
	// What the session spent is not carried: an import starts with no spend.
	Budget *carryon.Budget `json:"budget,omitempty"`
}

// Fork says that the session is a fork: of which session, sharing its history up to which seq,
// as it was at which version. The parent's rows are not in the bundle.
type Fork struct {
	ParentID    string `json:"parent_id"`
	ForkSeq     int64  `json:"fork_seq"`
	ForkVersion int64  `json:"fork_version"`
}

// Tombstone is a message the session deleted (or a fork inherited deleted): its seq, the
// session version of the delete and when it was made, and the role and kind of the message it
// hides. A deleted message of the session's own is also a message line, erased (no content).
type Tombstone struct {
	Seq       int64               `json:"seq"`
	Version   int64               `json:"version"`
	Role      carryon.Role        `json:"role"`
	Kind      carryon.MessageKind `json:"kind"`
	CreatedAt time.Time           `json:"created_at"`
}

// Run is a run's row: what carryon stores of it, without its lease.
type Run struct {
	ID               string               `json:"id"`
	SessionID        string               `json:"session_id"`
	Status           carryon.RunStatus    `json:"status"`
	Message          string               `json:"message"`
	TriggerSeq       int64                `json:"trigger_seq"`
	RequestID        string               `json:"request_id,omitempty"`
	Model            string               `json:"model"`
	Multitask        carryon.Multitask    `json:"multitask"`
	Agent            string               `json:"agent"`
	AgentDigest      string               `json:"agent_digest"`
	Door             carryon.Door         `json:"door,omitempty"`
	Step             int                  `json:"step"`
	Attempt          int                  `json:"attempt"`
	StopRequested    string               `json:"stop_requested,omitempty"`
	Takeovers        int                  `json:"takeovers"`
	Tools            []carryon.ClientTool `json:"tools,omitempty"`
	CompactThreshold int                  `json:"compact_threshold,omitempty"`
	Reply            string               `json:"reply,omitempty"`
	Error            string               `json:"error,omitempty"`
	Usage            carryon.Usage        `json:"usage"`
	CreatedAt        time.Time            `json:"created_at"`
	UpdatedAt        time.Time            `json:"updated_at"`
	StartedAt        *time.Time           `json:"started_at,omitempty"`
	FinishedAt       *time.Time           `json:"finished_at,omitempty"`
}

// File is one workspace file: its path in the workspace, its permission bits and its content
// (base64 in JSON).
type File struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
	Data []byte `json:"data"`
}

// SessionOf is the bundle's form of s.
func SessionOf(s *carryon.Session) *Session {
	return &Session{ID: s.ID, ExternalID: s.ExternalID, Title: s.Title, TitleDerived: s.TitleDerived, Status: s.Status,
		Version: s.Version, Agent: s.Agent, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, LastActiveAt: s.LastActiveAt,
		ExpiresAt: s.ExpiresAt, IdleTTLSeconds: s.IdleTTLSeconds, MessageCount: s.MessageCount, LastSeq: s.LastSeq,
		WorkingMemoryVersion: s.WorkingMemoryVersion, Metadata: s.Metadata}
}

// Stored is the session row s describes, owned by owner.
func (s *Session) Stored(owner string) *carryon.Session {
	return &carryon.Session{ID: s.ID, OwnerID: owner, ExternalID: s.ExternalID, Title: s.Title, TitleDerived: s.TitleDerived,
		Status: s.Status, Version: s.Version, Agent: s.Agent, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		LastActiveAt: s.LastActiveAt, ExpiresAt: s.ExpiresAt, IdleTTLSeconds: s.IdleTTLSeconds, MessageCount: s.MessageCount,
		LastSeq: s.LastSeq, WorkingMemoryVersion: s.WorkingMemoryVersion, Metadata: s.Metadata}
}

// RunOf is the bundle's form of r.
func RunOf(r *carryon.Run) *Run {
	return &Run{ID: r.ID, SessionID: r.SessionID, Status: r.Status, Message: r.Message, TriggerSeq: r.TriggerSeq,
		RequestID: r.RequestID, Model: r.Model, Multitask: r.Multitask, Agent: r.Agent, AgentDigest: r.AgentDigest,
		Door: r.Door, Step: r.Step, Attempt: r.Attempt, StopRequested: r.StopRequested, Takeovers: r.Takeovers, Tools: r.Tools,
		CompactThreshold: r.CompactThreshold, Reply: r.Reply, Error: r.Error, Usage: r.Usage, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}

// Stored is the run row r describes, owned by owner.
func (r *Run) Stored(owner string) *carryon.Run {
	return &carryon.Run{ID: r.ID, SessionID: r.SessionID, OwnerID: owner, Status: r.Status, Message: r.Message,
		TriggerSeq: r.TriggerSeq, RequestID: r.RequestID, Model: r.Model, Multitask: r.Multitask, Agent: r.Agent,
		AgentDigest: r.AgentDigest, Door: r.Door, Step: r.Step, Attempt: r.Attempt, StopRequested: r.StopRequested,
		Takeovers: r.Takeovers, Tools: r.Tools, CompactThreshold: r.CompactThreshold, Reply: r.Reply, Error: r.Error,
		Usage: r.Usage, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt}
}
