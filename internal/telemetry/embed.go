package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon/internal/model"
)

// Embedder returns e with an embeddings span and the gen_ai.client metrics (operation
// embeddings, input tokens only) around each call. Without telemetry it returns e.
func (t *Telemetry) Embedder(e model.Embedder) model.Embedder {
	if t == nil || (t.metrics == nil && !t.Tracing()) {
		return e
	}
	return &embedder{Embedder: e, t: t}
}

type embedder struct {
	model.Embedder
	t *Telemetry
}

// Embed is the wrapped embedder's Embed inside an "embeddings {model}" span.
func (e *embedder) Embed(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
	name := e.Name()
	start := time.Now()
	ctx, span := e.t.start(ctx, "embeddings "+req.Model, trace.SpanKindClient)
	resp, err := e.Embedder.Embed(ctx, req)
	errType := ""
	if err != nil {
		errType = errorType(err)
	}
	e.t.metrics.modelCall("embeddings", name, req.Model, resp.Model, errType, time.Since(start), model.Usage{InputTokens: resp.InputTokens})
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIOperationNameEmbeddings, semconv.GenAIProviderNameKey.String(name),
			semconv.GenAIRequestModel(req.Model), semconv.GenAIUsageInputTokens(resp.InputTokens))
		if req.Dimensions > 0 {
			span.SetAttributes(semconv.GenAIEmbeddingsDimensionCount(req.Dimensions))
		}
		if resp.Model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
		}
		if err != nil {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
	return resp, err
}
