package telemetry

import (
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// HTTPSpan is the server span of one request. Nil does nothing.
type HTTPSpan struct{ span trace.Span }

// StartHTTP starts the server span of request r served by route (a route pattern, never the raw
// path, so span names stay few), continuing the caller's trace when r carries a W3C traceparent.
// It returns r with the span in its context. Without tracing it returns r and nil.
func (t *Telemetry) StartHTTP(r *http.Request, route string) (*http.Request, *HTTPSpan) {
	if !t.Tracing() {
		return r, nil
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	method := r.Method
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE":
	default:
		method = "_OTHER"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route), semconv.URLPath(r.URL.Path),
		semconv.URLScheme(scheme), semconv.ServerAddress(r.Host),
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	if id := r.Header.Get("Idempotency-Key"); id != "" {
		attrs = append(attrs, attribute.Bool("carryon.request_id.present", true))
	}
	ctx, span := t.tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return r.WithContext(ctx), &HTTPSpan{span: span}
}

// End ends the span with the answer's status; code is the problem's error code, if any.
func (s *HTTPSpan) End(status int, code string) {
	if s == nil {
		return
	}
	s.span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if code != "" {
		s.span.SetAttributes(attribute.String("carryon.error.code", code))
	}
	if status >= 500 {
		s.span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(status)))
		s.span.SetStatus(codes.Error, http.StatusText(status))
	}
	s.span.End()
}
