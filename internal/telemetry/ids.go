package telemetry

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon"
)

// runTraceKey carries, in a context, the trace id the next root span takes (a run's).
type runTraceKey struct{}

// withTraceID returns ctx in which a new root span takes trace id id.
func withTraceID(ctx context.Context, id trace.TraceID) context.Context {
	return context.WithValue(ctx, runTraceKey{}, id)
}

// RunTraceID is the trace id of a run (carryon.RunTraceID) as an OpenTelemetry TraceID.
func RunTraceID(runID string) trace.TraceID {
	var id trace.TraceID
	_, _ = hex.Decode(id[:], []byte(carryon.RunTraceID(runID)))
	return id
}

// runIDs is the ID generator of carryon's tracer provider: random ids, except that a root span
// started for a run takes the run's trace id.
type runIDs struct{}

func (runIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(runTraceKey{}).(trace.TraceID)
	if !ok || !tid.IsValid() {
		_, _ = crand.Read(tid[:])
	}
	return tid, newSpanID()
}

func (runIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		_, _ = crand.Read(sid[:])
	}
	return sid
}

// LogHandler returns h with the trace_id and span_id of the context's span added to every record
// logged with a context that has one, so that a log line leads to its trace.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(attrs)}
}

func (l logHandler) WithGroup(name string) slog.Handler { return logHandler{l.Handler.WithGroup(name)} }
