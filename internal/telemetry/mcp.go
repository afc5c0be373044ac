package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// MCPSpan is the client span of one MCP request.
type MCPSpan struct{ span trace.Span }

// StartMCP starts the client span of an MCP request (method such as "tools/call", target the
// tool's name on its server or "") in the trace of the span in ctx, with the tracer provider of
// that span: an MCP call made outside a traced run records nothing. transport is "pipe" (stdio)
// or "tcp" (streamable HTTP); protocol the MCP protocol version if known. meta receives the
// W3C trace context (traceparent) to send in the request's _meta, as the MCP conventions advise.
func StartMCP(ctx context.Context, method, target, transport, server string, meta map[string]any) (context.Context, *MCPSpan) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return ctx, nil
	}
	name := method
	if target != "" {
		name += " " + target
	}
	tracer := parent.TracerProvider().Tracer(ScopeName)
	ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.McpMethodNameKey.String(method), semconv.NetworkTransportKey.String(transport),
	))
	if target != "" && method == "tools/call" {
		span.SetAttributes(semconv.GenAIToolName(target), semconv.GenAIOperationNameExecuteTool)
	}
	if server != "" {
		span.SetAttributes(semconv.ServerAddress(server))
	}
	if meta != nil {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		for k, v := range carrier {
			meta[k] = v
		}
	}
	return ctx, &MCPSpan{span: span}
}

// End ends the span: err is a failed request (a JSON-RPC error, a lost connection, a timeout),
// toolError a tools/call answered with isError.
func (s *MCPSpan) End(err error, toolError bool) {
	if s == nil {
		return
	}
	switch {
	case err != nil:
		s.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		s.span.SetStatus(codes.Error, err.Error())
	case toolError:
		s.span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		s.span.SetStatus(codes.Error, "the tool answered isError")
	}
	s.span.End()
}
