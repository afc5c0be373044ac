// Package telemetry is carryon's tracing and run metrics: OpenTelemetry spans that follow the
// GenAI semantic conventions (semconv v1.41.0) for runs (invoke_agent), model calls (chat),
// tool calls (execute_tool) and MCP client calls, plus an HTTP server span per request; and the
// Prometheus metrics of runs, model calls and tools.
//
// A *Telemetry is handed to the parts that report (the engine, the run manager, the HTTP server,
// the sweepers) through their configuration, never through a global. A nil *Telemetry is valid
// and does nothing, and so is one without tracing: then no exporter exists, no span is recorded
// and a span's attributes are not even built. Tracing is on only when an OTLP endpoint is
// configured (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or the server's
// --otlp-endpoint flag). Message contents (prompts, replies, tool arguments and results) go into
// spans only with Options.CaptureContent.
//
// A run's trace id follows from its id (carryon.RunTraceID): every attempt of a run, on any
// instance, is a root span in that one trace, and the run's JSON names it. The package must not
// decide anything about runs or sessions: it only reports what the callers tell it.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// ScopeName is the instrumentation scope of carryon's spans.
const ScopeName = "github.com/carryon-hub/carryon"

// Options configure New.
type Options struct {
	// Exporter receives the finished spans; nil means no tracing (no provider, no spans).
	Exporter sdktrace.SpanExporter
	// Sync exports each span as it ends instead of in batches (tests).
	Sync bool
	// CaptureContent records message contents in spans: the model's input and output messages,
	// the system instructions, tool arguments and results. Off by default: they may hold
	// personal data.
	CaptureContent bool
	// ServiceName is the resource's service.name (default "carryon").
	ServiceName string
	// Registerer receives the run, model and tool metrics; nil records none.
	Registerer prometheus.Registerer
}

// Telemetry reports carryon's spans and metrics. The zero value and nil do nothing.
type Telemetry struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
	content  bool
	metrics  *metrics
	prop     propagation.TextMapPropagator
}

// New returns the telemetry the options describe.
func New(opt Options) *Telemetry {
	t := &Telemetry{content: opt.CaptureContent, prop: propagation.TraceContext{}}
	if opt.Registerer != nil {
		t.metrics = newMetrics(opt.Registerer)
	}
	if opt.Exporter == nil {
		return t
	}
	name := opt.ServiceName
	if name == "" {
		name = "carryon"
	}
	res, _ := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(name), semconv.ServiceVersion(carryon.Version)))
	export := sdktrace.WithBatcher(opt.Exporter)
	if opt.Sync {
		export = sdktrace.WithSyncer(opt.Exporter)
	}
	t.provider = sdktrace.NewTracerProvider(export, sdktrace.WithResource(res), sdktrace.WithIDGenerator(runIDs{}))
	t.tracer = t.provider.Tracer(ScopeName, trace.WithInstrumentationVersion(carryon.Version),
		trace.WithSchemaURL(semconv.SchemaURL))
	return t
}

// Config is how a server turns tracing on: an OTLP/HTTP endpoint from a flag or the standard
// environment variables.
type Config struct {
	// Endpoint is an OTLP/HTTP endpoint (a URL such as http://collector:4318); empty reads
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT. With none, tracing
	// is off.
	Endpoint string
	// CaptureContent is Options.CaptureContent.
	CaptureContent bool
	// Getenv reads the environment.
	Getenv func(string) string
	// Registerer is Options.Registerer.
	Registerer prometheus.Registerer
}

// Setup returns the telemetry of a server: tracing with an OTLP/HTTP exporter when an endpoint is
// configured (the exporter also honours the other OTEL_EXPORTER_OTLP_* variables, such as
// headers and timeouts), metrics into cfg.Registerer. Call Shutdown before the process exits so
// that the last spans are sent.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	// The traces endpoint is used as it is; a base endpoint (the flag, OTEL_EXPORTER_OTLP_ENDPOINT)
	// gets the traces path, as the OTLP exporter specification says.
	endpoint, signal := strings.TrimSpace(cfg.Endpoint), false
	if traces := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); traces != "" && endpoint == "" {
		endpoint, signal = traces, true
	}
	if endpoint == "" {
		endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	}
	opt := Options{CaptureContent: cfg.CaptureContent, Registerer: cfg.Registerer, ServiceName: getenv("OTEL_SERVICE_NAME")}
	if endpoint == "" || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return New(opt), nil
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		return nil, fmt.Errorf("the OTLP endpoint %q must be an http:// or https:// URL", endpoint)
	}
	url := endpoint
	if !signal {
		url = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(url))
	if err != nil {
		return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	opt.Exporter = exp
	return New(opt), nil
}

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.provider != nil }

// Shutdown sends the spans not yet exported and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if !t.Tracing() {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// TracerProvider is the provider of the spans (a no-op one without tracing), for instrumenting
// other libraries into the same traces.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if !t.Tracing() {
		return noop.NewTracerProvider()
	}
	return t.provider
}

// start starts a span, or returns ctx and a non-recording span when tracing is off.
func (t *Telemetry) start(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if !t.Tracing() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(kind))
}

// errorType is the error.type of a failed operation: the HTTP status a model backend answered,
// the carryon error code, "canceled", "timeout", or "_OTHER".
func errorType(err error) string {
	if e, ok := model.AsError(err); ok && e.Status != 0 {
		return strconv.Itoa(e.Status)
	}
	if code := carryon.ErrorCode(err); code != "" && code != carryon.EINTERNAL {
		return code
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}
