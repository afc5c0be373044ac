package carryon

import (
	"encoding/json"
	"time"
)

// Compaction is a stored summary of a session's history up to CoversTo: one write, at the session
// version it produced, that makes the context builder send Summary in place of messages
// CoversFrom..CoversTo. It is stored as a message of kind summary (at Seq) whose metadata holds
// the rest, so the history it covers stays (append-only, forkable, restorable): a fork made
// before it does not see it, a fork made after it does, and deleting a message it covers deletes
// it too (the redaction rule of summaries). Summaries a run stored on its own when history no
// longer fitted are listed as compactions too, without Model, Instructions or token counts.
type Compaction struct {
	SessionID string `json:"session_id"`
	// Seq is the seq of the summary message: the compaction's identity within the session.
	Seq        int64  `json:"seq"`
	CoversFrom int64  `json:"covers_from"`
	CoversTo   int64  `json:"covers_to"`
	Summary    string `json:"summary"`
	// Model is the model that wrote the summary; Instructions, what the caller asked of it.
	Model        string `json:"model,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	// TokensBefore estimates the tokens of the conversation the context would hold without the
	// compaction (the summary before it and the messages after that); TokensAfter, with it
	// (the new summary and the messages it keeps).
	TokensBefore int       `json:"tokens_before"`
	TokensAfter  int       `json:"tokens_after"`
	Version      int64     `json:"version"`
	RequestID    string    `json:"request_id,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
}

// CompactionMeta is what a compaction's summary message holds in its metadata, under the key
// "compaction".
type CompactionMeta struct {
	Model        string `json:"model,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
}

// CompactionOf returns the compaction a summary message stands for (nil for another message).
func CompactionOf(m *Message) *Compaction {
	if m == nil || m.Kind != KindSummary || m.Deleted {
		return nil
	}
	c := &Compaction{SessionID: m.SessionID, Seq: m.Seq, CoversFrom: m.CoversFrom, CoversTo: m.CoversTo,
		Summary: m.Content, Version: m.Version, RequestID: m.RequestID, CreatedAt: m.CreatedAt}
	var meta struct {
		Compaction *CompactionMeta `json:"compaction"`
	}
	if json.Unmarshal(m.Metadata, &meta) == nil && meta.Compaction != nil {
		c.Model, c.Instructions = meta.Compaction.Model, meta.Compaction.Instructions
		c.TokensBefore, c.TokensAfter = meta.Compaction.TokensBefore, meta.Compaction.TokensAfter
	}
	return c
}

// CompactInput is the input of a compaction: POST /v1/sessions/{id}/compact.
type CompactInput struct {
	// KeepLast is how many of the newest messages stay out of the summary (default 0: all of
	// them are summarized). The cut never separates a tool call from its results: it moves to
	// older messages until it does not.
	KeepLast int `json:"keep_last,omitempty"`
	// Instructions are added to the summarizer's prompt (what to keep, in what form).
	Instructions string `json:"instructions,omitempty"`
	WriteOptions
}

// CompactionPage lists a session's compactions, oldest first.
type CompactionPage struct {
	Items []*Compaction `json:"items"`
}

// MaxCompactInstructions bounds CompactInput.Instructions, in bytes.
const MaxCompactInstructions = 16 << 10
