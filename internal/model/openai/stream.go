package openai

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/carryon-hub/carryon/internal/model"
)

// streamState folds the chunks of one stream: it returns text deltas as they come and keeps the
// tool-call fragments, usage and finish reason for the final chunk.
type streamState struct {
	calls   []*pendingCall
	byIndex map[int64]*pendingCall
	usage   *model.Usage
	finish  string
	yielded bool
	// model and id are the answering model and the completion's id, from the chunks.
	model, id string
}

// pendingCall is a tool call being assembled from its fragments.
type pendingCall struct {
	id, name string
	args     strings.Builder
}

// add folds one chunk and returns the text deltas it carried. Only the first choice is read:
// requests never ask for more than one.
func (s *streamState) add(c openai.ChatCompletionChunk) []string {
	if c.JSON.Usage.Valid() {
		s.usage = &model.Usage{InputTokens: int(c.Usage.PromptTokens), OutputTokens: int(c.Usage.CompletionTokens),
			CachedTokens: int(c.Usage.PromptTokensDetails.CachedTokens)}
	}
	if c.Model != "" {
		s.model, s.id = c.Model, c.ID
	}
	var deltas []string
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != "" {
			deltas = append(deltas, ch.Delta.Content)
		}
		if ch.Delta.Refusal != "" {
			deltas = append(deltas, ch.Delta.Refusal)
		}
		for _, f := range ch.Delta.ToolCalls {
			s.addFragment(f)
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
	return deltas
}

// outputBytes is how much of the model's output a chunk carries: text, refusal and tool-call
// arguments of its first choice, for model.Progress.
func outputBytes(c openai.ChatCompletionChunk) int {
	n := 0
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		n += len(ch.Delta.Content) + len(ch.Delta.Refusal)
		for _, f := range ch.Delta.ToolCalls {
			n += len(f.Function.Arguments)
		}
	}
	return n
}

// addFragment folds one tool-call fragment. The first fragment of a call carries its index, id
// and name; later ones carry pieces of the arguments under the same index. A fragment with a new
// id at a used index starts a new call (some servers send every call at index 0).
func (s *streamState) addFragment(f openai.ChatCompletionChunkChoiceDeltaToolCall) {
	cur := s.byIndex[f.Index]
	if cur == nil || (f.ID != "" && cur.id != "" && f.ID != cur.id) {
		cur = &pendingCall{}
		if s.byIndex == nil {
			s.byIndex = map[int64]*pendingCall{}
		}
		s.byIndex[f.Index] = cur
		s.calls = append(s.calls, cur)
	}
	if cur.id == "" {
		cur.id = f.ID
	}
	if cur.name == "" {
		cur.name = f.Function.Name
	}
	cur.args.WriteString(f.Function.Arguments)
}

// final returns the last chunk of a stream that ended without an error. A stream that never said
// why it finished was cut short: that is io.ErrUnexpectedEOF.
func (s *streamState) final() (model.Chunk, error) {
	if s.finish == "" {
		return model.Chunk{}, io.ErrUnexpectedEOF
	}
	out := model.Chunk{Usage: s.usage, FinishReason: s.finish, Model: s.model, ResponseID: s.id}
	for _, c := range s.calls {
		id := c.id
		if id == "" {
			id = "call_" + rand.Text()
		}
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{
			ID:        id,
			Name:      c.name,
			Arguments: model.NormalizeArguments(c.args.String()),
		})
	}
	switch {
	case out.FinishReason == "function_call":
		out.FinishReason = model.FinishToolCalls
	case out.FinishReason == model.FinishStop && len(out.ToolCalls) > 0:
		// Some compatible servers say "stop" after tool calls; the calls are what matters.
		out.FinishReason = model.FinishToolCalls
	}
	return out, nil
}

// mapError turns an SDK error into a *model.Error.
func mapError(ctx context.Context, err error, yielded bool) *model.Error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		return model.StatusError(Name, apiErr.StatusCode, apiErr.Message, h, err)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return streamError(se)
	}
	return model.TransportError(ctx, Name, err, yielded)
}

// streamError maps an error the server reported inside the stream ({"error": {…}}). Such errors
// come with a 200 status; their type or code says whether the server was at fault.
func streamError(se *ssestream.StreamError) *model.Error {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(se.Event.Data, &body)
	msg := body.Error.Message
	if msg == "" {
		msg = se.Message
	}
	kind, _ := body.Error.Code.(string)
	kind = strings.ToLower(body.Error.Type + " " + kind)
	retryable := false
	for _, k := range []string{"server_error", "rate_limit", "overloaded", "timeout", "unavailable"} {
		if strings.Contains(kind, k) {
			retryable = true
		}
	}
	return &model.Error{Provider: Name, Retryable: retryable, Message: msg, Err: se}
}
