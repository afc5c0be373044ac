package carryon

import "encoding/json"

// ContextPreview is exactly what would be sent to the model for a session now, with its
// accounting: the answer of GET /v1/sessions/{id}/context. The context builder produces it (a
// run's context is a preview plus what only the run needs).
type ContextPreview struct {
	SessionID string `json:"session_id"`
	// Version is the session version the context was built at.
	Version  int64  `json:"version"`
	Model    string `json:"model"`
	Encoding string `json:"encoding"`
	// Estimated is true when the token counts are estimates (no vocabulary of the model).
	Estimated bool `json:"estimated"`
	Budget    int  `json:"budget"`
	// Tokens is the size of the whole context; the parts' counts add up to it.
	Tokens int           `json:"tokens"`
	Parts  []ContextPart `json:"parts"`
	System string        `json:"system"`
	// Messages is the conversation after the system message.
	Messages []ModelMessage `json:"messages"`
	// FirstSeq and LastSeq are the seqs of the first and last message included (0 when none).
	FirstSeq int64 `json:"first_seq"`
	LastSeq  int64 `json:"last_seq"`
	// SummaryCoversTo is the last seq the summary in the context stands for (0: no summary).
	SummaryCoversTo int64 `json:"summary_covers_to"`
	// Unsummarized is how many messages were cut without a summary covering them yet (a
	// preview, or no summarizer); a run stores a summary first.
	Unsummarized int `json:"unsummarized"`
	// Notes say what the builder had to work around, in sentences: tool messages or calls of an
	// old session left out because a model API would refuse them, or a summary that could not
	// be made (the older messages are then left out unsummarized, and the run goes on).
	Notes []string `json:"notes,omitempty"`
}

// ContextPart is one section of a context with its token count. The system message's framing
// is counted with the system prompt, each message's framing with the messages.
type ContextPart struct {
	Name    string `json:"name"`
	Tokens  int    `json:"tokens"`
	Content string `json:"content,omitempty"`
	// Items counts the entries of a list part (messages, tool calls).
	Items int `json:"items,omitempty"`
}

// ModelMessage is one message of a context in the form a model receives it.
type ModelMessage struct {
	// Role is one of the Role values: system, user, assistant or tool.
	Role string `json:"role"`
	// Content is the text of the message; for a tool message, the tool's result.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ModelToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the assistant's call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
}

// ModelToolCall is one call of a tool an assistant message of a context asked for.
type ModelToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object of arguments ("{}" when the model sent none).
	Arguments json.RawMessage `json:"arguments"`
}

// ContextSnapshotRequest says what one context build reads.
type ContextSnapshotRequest struct {
	// Messages is the window of most recent messages read (1 to MaxMessageWindow).
	Messages int
	// Actions is how many of the session's most recent tool calls are read; 0 reads none.
	Actions int
	// LongTermItems is how many of the owner's long-term memory items are searched; 0 searches
	// none.
	LongTermItems int
	// LongTermQuery makes the search text from the session as read (the builder uses the last
	// user message); nil or "" returns the most recently updated items.
	LongTermQuery func(*SessionView) string
}

// ContextSnapshot is the state one context is built from, read at one point in time (one read
// transaction), so that its parts agree with each other and with View.Version.
type ContextSnapshot struct {
	// View is the session with its working memory and its last Messages messages.
	View *SessionView
	// Actions are the session's most recent tool calls, newest first.
	Actions []*Action
	// LongTerm are the session owner's long-term memory items most relevant to the query, best
	// first, with scores relative to the best (1 for the best; 0 for items found without a
	// query). Only the owner's own items, and only when the caller is the owner.
	LongTerm []*LongTermItem
}
