package openaiapi

import (
	"encoding/json"

	"github.com/carryon-hub/carryon"
)

// responseRecord is what a response request asked for, kept with its run (NewRun.Metadata,
// under "openai_response") so that every answer about the response, on any instance and at any
// time, says the same.
type responseRecord struct {
	Model              string            `json:"model,omitempty"`
	Instructions       json.RawMessage   `json:"instructions,omitempty"`
	Metadata           json.RawMessage   `json:"metadata,omitempty"`
	Tools              []json.RawMessage `json:"tools,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Conversation       string            `json:"conversation,omitempty"`
	Store              *bool             `json:"store,omitempty"`
	Background         bool              `json:"background,omitempty"`
	// Echo are request fields carryon does not act on, answered as sent (tool_choice,
	// temperature, top_p, parallel_tool_calls, max_output_tokens, text, truncation, reasoning,
	// user).
	Echo map[string]json.RawMessage `json:"echo,omitempty"`
	// CompactThreshold is context_management's compact_threshold (0 for none), the run's.
	CompactThreshold int `json:"compact_threshold,omitempty"`
	// InputCount is how many messages the request's input stored (the last is the run's user
	// message).
	InputCount int `json:"input_count,omitempty"`
}

// echoed are the request fields a Response answers as they were sent.
var echoed = []string{"tool_choice", "temperature", "top_p", "parallel_tool_calls", "max_output_tokens", "text", "truncation", "reasoning", "user", "service_tier", "top_logprobs", "max_tool_calls", "prompt_cache_key", "safety_identifier"}

// response is the specification's Response object.
type response struct {
	ID                 string
	CreatedAt          int64
	Status             string
	Error              *responseError
	Incomplete         string // incomplete_details.reason, "" for none
	Model              string
	Output             []map[string]any
	Usage              *responseUsage
	PreviousResponseID string
	ConversationID     string
	record             responseRecord
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseUsage struct {
	InputTokens   int            `json:"input_tokens"`
	InputDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens  int            `json:"output_tokens"`
	OutputDetails map[string]int `json:"output_tokens_details"`
	TotalTokens   int            `json:"total_tokens"`
}

// newResponse is the response of a segment as it is created.
func newResponse(id string, run *carryon.Run, rec responseRecord, created int64, prev string) response {
	m := rec.Model
	if m == "" {
		m = run.Model
	}
	return response{ID: id, CreatedAt: created, Status: "queued", Model: m, PreviousResponseID: prev, ConversationID: run.SessionID, record: rec, Output: []map[string]any{}}
}

// snapshot is the Response object as JSON: with its output when full, with an empty output
// (as response.created and response.in_progress have it) otherwise.
func (r response) snapshot(full bool) map[string]any {
	out := []map[string]any{}
	if full {
		out = r.Output
	}
	null := json.RawMessage("null")
	orNull := func(v json.RawMessage) json.RawMessage {
		if len(v) == 0 {
			return null
		}
		return v
	}
	meta := r.record.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	tools := r.record.Tools
	if tools == nil {
		tools = []json.RawMessage{}
	}
	body := map[string]any{
		"id": r.ID, "object": "response", "created_at": r.CreatedAt, "status": r.Status,
		"error": r.Error, "incomplete_details": nil, "instructions": orNull(r.record.Instructions),
		"model": r.Model, "output": out, "parallel_tool_calls": true, "previous_response_id": nil,
		"reasoning": nil, "store": true, "temperature": nil, "top_p": nil, "max_output_tokens": nil,
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "tool_choice": "auto",
		"tools": tools, "truncation": "disabled", "usage": r.Usage, "user": nil, "metadata": meta,
		"background": r.record.Background, "conversation": map[string]any{"id": r.ConversationID},
	}
	if r.Usage == nil {
		body["usage"] = nil
	}
	if r.Error == nil {
		body["error"] = nil
	}
	if r.Incomplete != "" {
		body["incomplete_details"] = map[string]any{"reason": r.Incomplete}
	}
	if r.PreviousResponseID != "" {
		body["previous_response_id"] = r.PreviousResponseID
	}
	if r.record.Store != nil {
		body["store"] = *r.record.Store
	}
	for k, v := range r.record.Echo {
		body[k] = v
	}
	if full {
		body["output_text"] = outputText(r.Output)
	}
	return body
}

// outputText is the text of the output's message items, as the SDKs' output_text has it.
func outputText(items []map[string]any) string {
	var s string
	for _, it := range items {
		if it["type"] != typeMessage || it["status"] != "completed" {
			continue
		}
		parts, _ := it["content"].([]any)
		for _, p := range parts {
			if m, ok := p.(map[string]any); ok {
				t, _ := m["text"].(string)
				s += t
			}
		}
	}
	return s
}
