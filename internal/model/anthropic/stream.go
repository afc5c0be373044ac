package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/carryon-hub/carryon/internal/model"
)

// streamState folds the events of one stream: it returns text deltas as they come and keeps the
// tool calls, usage and stop reason for the final chunk.
type streamState struct {
	calls   []*pendingCall
	byIndex map[int64]*pendingCall
	usage   model.Usage
	stop    string
	stopped bool
	yielded bool
	// model and id are the answering model and the message's id, from message_start.
	model, id string
}

// pendingCall is a tool_use block being assembled from its input_json_delta events.
type pendingCall struct {
	id, name string
	start    json.RawMessage // the input given in content_block_start, used when no delta comes
	args     strings.Builder
}

// add folds one event and returns the text it carried, if any.
func (s *streamState) add(ev anthropic.MessageStreamEventUnion) (string, error) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.model, s.id = string(ev.Message.Model), ev.Message.ID
		s.usage.InputTokens = int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
		s.usage.OutputTokens = int(u.OutputTokens)
		s.usage.CachedTokens = int(u.CacheReadInputTokens)
	case "content_block_start":
		switch ev.ContentBlock.Type {
		case "text":
			return ev.ContentBlock.Text, nil
		case "tool_use":
			c := &pendingCall{id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
			if ev.ContentBlock.Input != nil {
				c.start, _ = json.Marshal(ev.ContentBlock.Input)
			}
			if s.byIndex == nil {
				s.byIndex = map[int64]*pendingCall{}
			}
			s.byIndex[ev.Index] = c
			s.calls = append(s.calls, c)
		}
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			return ev.Delta.Text, nil
		case "input_json_delta":
			c := s.byIndex[ev.Index]
			if c == nil {
				return "", errors.New("input_json_delta for a block that is not a tool_use")
			}
			c.args.WriteString(ev.Delta.PartialJSON)
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			s.stop = string(ev.Delta.StopReason)
		}
		// message_delta's usage is cumulative; input counts appear there only on some servers.
		if in := ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens; in > 0 {
			s.usage.InputTokens, s.usage.CachedTokens = int(in), int(ev.Usage.CacheReadInputTokens)
		}
		if ev.Usage.OutputTokens > 0 {
			s.usage.OutputTokens = int(ev.Usage.OutputTokens)
		}
	case "message_stop":
		s.stopped = true
	}
	return "", nil
}

// final returns the last chunk of a stream that ended without an error. A stream without
// message_stop was cut short: that is io.ErrUnexpectedEOF.
func (s *streamState) final() (model.Chunk, error) {
	if !s.stopped {
		return model.Chunk{}, io.ErrUnexpectedEOF
	}
	usage := s.usage
	out := model.Chunk{Usage: &usage, FinishReason: finishReason(s.stop), Model: s.model, ResponseID: s.id}
	for _, c := range s.calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = string(c.start)
		}
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: c.id, Name: c.name, Arguments: model.NormalizeArguments(args)})
	}
	return out, nil
}

// finishReason maps a stop_reason to model's finish reasons; unknown reasons pass through.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence", "":
		return model.FinishStop
	case "tool_use":
		return model.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return model.FinishLength
	case "refusal":
		return "content_filter"
	}
	return stop
}

// streamErrorStatus is the HTTP status each error type of the API stands for; an error event
// inside a stream arrives under the stream's 200.
var streamErrorStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      529,
}

// mapError turns an SDK error into a *model.Error.
func mapError(ctx context.Context, err error, yielded bool) *model.Error {
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return model.TransportError(ctx, Name, err, yielded)
	}
	status := apiErr.StatusCode
	if status < 300 {
		status = streamErrorStatus[string(apiErr.Type())]
		if status == 0 {
			status = http.StatusInternalServerError
		}
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	msg := apiErr.Message
	if msg == "" {
		msg = string(apiErr.Type())
	}
	return model.StatusError(Name, status, msg, h, err)
}
