// Package model is carryon's provider-neutral view of a language model: the messages, tool specs and
// streamed chunks the engine speaks, the Provider interface each backend implements (model/openai,
// model/anthropic), one error type that says whether a failure is worth retrying, WithRetry,
// the only place where model calls are retried, and WithLimits, the only place where they are
// bounded in time and output.
//
// The package owns the vocabulary of a single model call. It must not know about sessions, runs,
// storage or HTTP routes, and it never retries on its own: a provider reports, WithRetry decides.
package model

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
)

// Message roles.
const (
	RoleSystem    = "system"    // instructions; providers with a separate system prompt move it there
	RoleUser      = "user"      // the person's turn
	RoleAssistant = "assistant" // the model's turn, with any tool calls
	RoleTool      = "tool"      // a tool's result, answering one call by its id
)

// Finish reasons reported in the last chunk of a stream.
const (
	FinishStop      = "stop"       // the model ended its turn
	FinishToolCalls = "tool_calls" // the model wants tools run before it continues
	FinishLength    = "length"     // the output hit the token limit
)

// Message is one entry of the conversation sent to a model.
type Message struct {
	// Role is one of RoleSystem, RoleUser, RoleAssistant or RoleTool.
	Role string `json:"role"`
	// Content is the text of the message; for a tool message, the tool's result.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the assistant's call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name on a tool message. Providers whose wire format has no place for it
	// leave it out.
	Name string `json:"name,omitempty"`
}

// ToolCall is one complete request of the model to run a tool.
type ToolCall struct {
	// ID is the provider's id for the call; the tool result must carry it back.
	ID string `json:"id"`
	// Name is the tool to run.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments, always valid JSON ("{}" when the model sent none).
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	// Name is the tool's name as the model sees it.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is a JSON Schema object describing the arguments.
	Parameters json.RawMessage
}

// Request is one model call.
type Request struct {
	// Model overrides the provider's configured model when set.
	Model string
	// System is the system prompt, sent ahead of Messages.
	System string
	// Messages is the conversation so far.
	Messages []Message
	// Tools are the tools the model may call.
	Tools []ToolSpec
	// MaxTokens limits the output; 0 leaves the provider's default.
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves the provider's default.
	Temperature *float64
}

// Usage counts the tokens of one call.
type Usage struct {
	// InputTokens counts the prompt, cached parts included.
	InputTokens int `json:"input_tokens"`
	// OutputTokens counts the generated tokens.
	OutputTokens int `json:"output_tokens"`
	// CachedTokens is the part of InputTokens the provider read from its prompt cache (OpenAI's
	// prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens), which budgets
	// price at the agents file's cached price; 0 when the provider says nothing of it.
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Chunk is one element of a stream. Text deltas come first, in order; the last chunk of a
// successful stream carries the assembled tool calls, the usage and the finish reason.
type Chunk struct {
	// Delta is a piece of the reply's text, in order.
	Delta string
	// ToolCalls are complete calls, delivered once, in the last chunk.
	ToolCalls []ToolCall
	// Usage is set on the last chunk when the provider reported it.
	Usage *Usage
	// FinishReason is set on the last chunk: FinishStop, FinishToolCalls, FinishLength, or a
	// provider-specific reason passed through as is.
	FinishReason string
	// Model and ResponseID are the model that answered and the backend's id of the answer, on
	// the last chunk when the backend said them.
	Model, ResponseID string
}

// Provider is a model backend.
type Provider interface {
	// Name identifies the provider in errors and logs ("openai", "anthropic", …).
	Name() string
	// Stream sends req and yields text deltas as they arrive, then one final chunk with the
	// assembled tool calls, usage and finish reason. An error ends the stream; errors from the
	// backend are *Error. Ranging over the result sends the request; each range sends it again.
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// Response is a whole stream collected into one value.
type Response struct {
	// Text is the concatenation of every delta.
	Text string
	// ToolCalls are the calls the model asked for.
	ToolCalls []ToolCall
	// Usage is the last usage the stream reported (zero when it reported none).
	Usage Usage
	// FinishReason is the reason of the last chunk that had one.
	FinishReason string
	// Model and ResponseID are the last ones the stream reported.
	Model, ResponseID string
}

// Add adds a streamed chunk to r: its delta to the text, its tool calls, and the usage, finish
// reason, model and response id it reports.
func (r *Response) Add(c Chunk) {
	r.Text += c.Delta
	r.ToolCalls = append(r.ToolCalls, c.ToolCalls...)
	if c.Usage != nil {
		r.Usage = *c.Usage
	}
	if c.FinishReason != "" {
		r.FinishReason = c.FinishReason
	}
	if c.Model != "" {
		r.Model, r.ResponseID = c.Model, c.ResponseID
	}
}

// Collect consumes seq and assembles its chunks into a Response. On error it returns what was
// collected so far together with the error.
func Collect(seq iter.Seq2[Chunk, error]) (Response, error) {
	var resp Response
	for c, err := range seq {
		if err != nil {
			return resp, err
		}
		resp.Add(c)
	}
	return resp, nil
}

// NormalizeArguments returns s as tool-call arguments that are always valid JSON: "{}" for
// nothing, s itself when it is valid JSON, and s encoded as a JSON string otherwise. A model that
// emits malformed arguments thus reaches the tool, which rejects them with a message the model can
// read, instead of breaking the encoding of the whole conversation.
func NormalizeArguments(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(s) // a string always encodes
	return b
}
