package telemetry

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon/internal/model"
)

// Provider returns p with a chat span and the gen_ai.client metrics around each model call;
// defaultModel names the model of calls whose request names none. Without telemetry it returns p.
func (t *Telemetry) Provider(p model.Provider, defaultModel string) model.Provider {
	if t == nil || (t.metrics == nil && !t.Tracing()) {
		return p
	}
	return &provider{Provider: p, t: t, model: defaultModel}
}

// provider is a model.Provider that reports its calls.
type provider struct {
	model.Provider
	t     *Telemetry
	model string
}

// Stream is the wrapped provider's Stream inside a chat span: the span starts when the stream is
// ranged over and ends with it, with the answer's model, finish reason and usage.
func (p *provider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		reqModel := req.Model
		if reqModel == "" {
			reqModel = p.model
		}
		name := p.Name()
		start := time.Now()
		ctx, span := p.t.start(ctx, "chat "+reqModel, trace.SpanKindClient)
		recording := span.IsRecording()
		if recording {
			span.SetAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(name),
				semconv.GenAIRequestModel(reqModel), semconv.GenAIRequestStream(true))
			if req.MaxTokens > 0 {
				span.SetAttributes(semconv.GenAIRequestMaxTokens(req.MaxTokens))
			}
			if req.Temperature != nil {
				span.SetAttributes(semconv.GenAIRequestTemperature(*req.Temperature))
			}
			if p.t.content {
				span.SetAttributes(semconv.GenAISystemInstructionsKey.String(textPartsJSON(req.System)),
					semconv.GenAIInputMessagesKey.String(inputMessagesJSON(req.Messages)))
			}
		}
		var resp model.Response
		var callErr error
		first := true
		for c, err := range p.Provider.Stream(ctx, req) {
			if err != nil {
				callErr = err
				yield(c, err)
				break
			}
			if first && recording {
				first = false
				span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(time.Since(start).Seconds()))
			}
			resp.Add(c)
			if !yield(c, nil) {
				callErr = context.Canceled // the consumer stopped: the call was abandoned
				break
			}
		}
		errType := ""
		if callErr != nil {
			errType = errorType(callErr)
		}
		p.t.metrics.modelCall("chat", name, reqModel, resp.Model, errType, time.Since(start), resp.Usage)
		if !recording {
			return
		}
		if resp.Model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
		}
		if resp.ResponseID != "" {
			span.SetAttributes(semconv.GenAIResponseID(resp.ResponseID))
		}
		if resp.FinishReason != "" {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(resp.FinishReason))
		}
		span.SetAttributes(semconv.GenAIUsageInputTokens(resp.Usage.InputTokens), semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens))
		if p.t.content && callErr == nil {
			span.SetAttributes(semconv.GenAIOutputMessagesKey.String(outputMessagesJSON(resp)))
		}
		if callErr != nil {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, callErr.Error())
		}
		span.End()
	}
}

// The JSON shapes of the GenAI conventions' message attributes.
type msgPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

type msg struct {
	Role         string    `json:"role"`
	Parts        []msgPart `json:"parts"`
	FinishReason string    `json:"finish_reason,omitempty"`
}

func textPartsJSON(text string) string {
	b, _ := json.Marshal([]msgPart{{Type: "text", Content: text}})
	return string(b)
}

func inputMessagesJSON(msgs []model.Message) string {
	out := make([]msg, 0, len(msgs))
	for _, m := range msgs {
		var parts []msgPart
		switch {
		case m.Role == model.RoleTool:
			parts = append(parts, msgPart{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		case m.Content != "":
			parts = append(parts, msgPart{Type: "text", Content: m.Content})
		}
		for _, c := range m.ToolCalls {
			parts = append(parts, msgPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out = append(out, msg{Role: m.Role, Parts: parts})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func outputMessagesJSON(resp model.Response) string {
	m := msg{Role: model.RoleAssistant, FinishReason: resp.FinishReason, Parts: []msgPart{}}
	if resp.Text != "" {
		m.Parts = append(m.Parts, msgPart{Type: "text", Content: resp.Text})
	}
	for _, c := range resp.ToolCalls {
		m.Parts = append(m.Parts, msgPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	b, _ := json.Marshal([]msg{m})
	return string(b)
}
