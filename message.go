package carryon

import (
	"encoding/json"
	"time"
)

// Role is who speaks in a message.
type Role string

// Message roles, as model APIs know them.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// MessageKind says whether a message is the conversation's own or a summary of older ones.
type MessageKind string

// Message kinds. A summary stands for a range of older messages; it never replaces them.
const (
	KindMessage MessageKind = "message"
	KindSummary MessageKind = "summary"
)

// Message is one entry of a session's append-only history. (SessionID, Seq) is its identity; Seq
// starts at 1 and has no gaps within a session's own history. A fork continues its parent's numbering.
type Message struct {
	SessionID string          `json:"session_id"`
	Seq       int64           `json:"seq"`
	Role      Role            `json:"role"`
	Kind      MessageKind     `json:"kind"`
	Content   string          `json:"content"`
	Name      string          `json:"name,omitempty"`
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
	// ToolCallID links a tool result to the assistant's call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// CoversFrom and CoversTo are the seq range a summary stands for.
	CoversFrom int64           `json:"covers_from,omitempty"`
	CoversTo   int64           `json:"covers_to,omitempty"`
	RunID      string          `json:"run_id,omitempty"`
	RequestID  string          `json:"request_id,omitempty"`
	Tokens     int             `json:"tokens"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	// Version is the session version the append that stored this message produced (of a
	// tombstone: the version the delete produced).
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// Deleted marks a tombstone: a deleted message, listed only when asked for
	// (MessageFilter.IncludeDeleted), with its seq, role and kind, the version and time
	// (CreatedAt) of the delete, and no content.
	Deleted bool `json:"deleted,omitempty"`
}

// ToolCall is one tool call an assistant message asks for, as stored in Message.ToolCalls (a JSON
// array of these).
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// NewMessage is one message to append.
type NewMessage struct {
	Role       Role            `json:"role"`
	Content    string          `json:"content"`
	Kind       MessageKind     `json:"kind,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	CoversFrom int64           `json:"covers_from,omitempty"`
	CoversTo   int64           `json:"covers_to,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// AppendInput is the input of SessionService.AppendMessages.
type AppendInput struct {
	Messages []NewMessage `json:"messages"`
	// WorkingMemoryPatch, when set, is a JSON Merge Patch applied to the working memory in the
	// same write: one transaction, one version, one request id, so a crash keeps both or neither.
	WorkingMemoryPatch json.RawMessage `json:"working_memory_patch,omitempty"`
	// Fence, set by a runner, links the messages to its run and refuses the write when the run
	// is no longer the runner's (another attempt took it over).
	Fence *RunFence `json:"-"`
	WriteOptions
}

// RunFence names a run and the attempt a runner holds; writes carrying it are refused with EFENCED
// unless the run is active and still at that attempt.
type RunFence struct {
	RunID   string
	Attempt int
}

// AppendResult is the answer to an append: the session's new version and the stored messages.
type AppendResult struct {
	SessionID string     `json:"session_id"`
	Version   int64      `json:"version"`
	Messages  []*Message `json:"messages"`
	// WorkingMemory is the working memory after the append's working_memory_patch, when it had one.
	WorkingMemory *WorkingMemoryState `json:"working_memory,omitempty"`
}

// MessageFilter pages through a session's messages, oldest first.
type MessageFilter struct {
	// Cursor is the NextCursor of the previous page.
	Cursor string `json:"cursor,omitempty"`
	// AfterSeq starts after that seq: an alias of Cursor, which is the seq of the last message of
	// the previous page. Give one of them.
	AfterSeq int64 `json:"after_seq,omitempty"`
	// BeforeSeq pages backwards: the page is the last Limit messages before that seq, oldest
	// first, and its NextCursor (when older ones exist) is the seq of its first message, the
	// BeforeSeq of the page before it. It goes with neither Cursor nor AfterSeq.
	BeforeSeq int64 `json:"before_seq,omitempty"`
	Limit     int   `json:"limit,omitempty"`
	// IncludeDeleted adds the tombstones of deleted messages (Message.Deleted) in the seq range
	// the page covers, in seq order among the visible messages; they do not count against Limit.
	IncludeDeleted bool `json:"include_deleted,omitempty"`
}

// MessagePage is one page of messages.
type MessagePage struct {
	Items      []*Message `json:"items"`
	NextCursor string     `json:"next_cursor,omitempty"`
}
