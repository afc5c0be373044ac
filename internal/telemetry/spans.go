package telemetry

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon"
)

// carryon's own span attributes.
const (
	AttrRunID          = attribute.Key("carryon.run.id")
	AttrRunAttempt     = attribute.Key("carryon.run.attempt")
	AttrRunStatus      = attribute.Key("carryon.run.status")
	AttrRunStep        = attribute.Key("carryon.run.step")
	AttrSessionVersion = attribute.Key("carryon.session.version")
	AttrActionID       = attribute.Key("carryon.action.id")
	AttrActionStatus   = attribute.Key("carryon.action.status")
	AttrEffect         = attribute.Key("carryon.effect")
	AttrStep           = attribute.Key("carryon.step")
)

// RunSpan is the invoke_agent span of one attempt of a run, and its metrics. Nil does nothing.
type RunSpan struct {
	t       *Telemetry
	span    trace.Span
	start   time.Time
	agent   string
	version int64
}

// StartRun starts the invoke_agent span of a runner's attempt at run, as a root span in the run's
// trace (RunTraceID). The returned context carries it to the model and tool spans.
func (t *Telemetry) StartRun(ctx context.Context, run *carryon.Run) (context.Context, *RunSpan) {
	if t == nil {
		return ctx, nil
	}
	rs := &RunSpan{t: t, start: time.Now(), agent: run.Agent}
	if !t.Tracing() {
		rs.span = trace.SpanFromContext(context.Background())
		return ctx, rs
	}
	ctx = withTraceID(trace.ContextWithSpanContext(ctx, trace.SpanContext{}), RunTraceID(run.ID))
	ctx, rs.span = t.tracer.Start(ctx, "invoke_agent "+run.Agent, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.GenAIOperationNameInvokeAgent,
			semconv.GenAIAgentName(run.Agent),
			semconv.GenAIConversationID(run.SessionID),
			semconv.GenAIRequestModel(run.Model),
			AttrRunID.String(run.ID),
			AttrRunAttempt.Int(run.Attempt),
		))
	if t.content && run.Message != "" { // a run that continues after a tool output has no message
		rs.span.SetAttributes(semconv.GenAIInputMessagesKey.String(messagesJSON("user", run.Message)))
	}
	return ctx, rs
}

// TraceID is the span's trace id, or "" when nothing is traced.
func (rs *RunSpan) TraceID() string {
	if rs == nil || !rs.span.SpanContext().IsValid() {
		return ""
	}
	return rs.span.SpanContext().TraceID().String()
}

// SessionVersion records the session version a write of the run produced (the last one is kept).
func (rs *RunSpan) SessionVersion(v int64) {
	if rs != nil && v > rs.version {
		rs.version = v
	}
}

// End ends the attempt: status is how it ended (a run status), err the run's error if any. A
// runner that stopped without recording an end (a shutdown, a lost lease) passes status "".
func (rs *RunSpan) End(run *carryon.Run, status carryon.RunStatus, err error) {
	if rs == nil {
		return
	}
	label := string(status)
	if label == "" {
		label = "released"
	}
	rs.t.metrics.runEnded(rs.agent, label, time.Since(rs.start))
	if !rs.span.IsRecording() {
		return
	}
	rs.span.SetAttributes(
		AttrRunStatus.String(label),
		AttrRunStep.Int(run.Step),
		semconv.GenAIUsageInputTokens(run.Usage.InputTokens),
		semconv.GenAIUsageOutputTokens(run.Usage.OutputTokens),
	)
	if rs.version > 0 {
		rs.span.SetAttributes(AttrSessionVersion.Int64(rs.version))
	}
	if rs.t.content && run.Reply != "" {
		rs.span.SetAttributes(semconv.GenAIOutputMessagesKey.String(messagesJSON("assistant", run.Reply)))
	}
	if status == carryon.RunFailed {
		rs.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		msg := run.Error
		if err != nil {
			msg = err.Error()
		}
		rs.span.SetStatus(codes.Error, msg)
	}
	rs.span.End()
}

// ToolSpan is the execute_tool span of one journaled call. Nil does nothing.
type ToolSpan struct {
	t     *Telemetry
	span  trace.Span
	start time.Time
}

// StartTool starts the execute_tool span of action a (described by description, "" for none).
func (t *Telemetry) StartTool(ctx context.Context, a *carryon.Action, description string) (context.Context, *ToolSpan) {
	if t == nil {
		return ctx, nil
	}
	ts := &ToolSpan{t: t, start: time.Now()}
	ctx, ts.span = t.start(ctx, "execute_tool "+a.Tool, trace.SpanKindInternal)
	if ts.span.IsRecording() {
		ts.span.SetAttributes(
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(a.Tool),
			semconv.GenAIToolCallID(a.CallID),
			semconv.GenAIToolTypeKey.String("function"),
			AttrEffect.String(string(a.Effect)),
			AttrActionID.String(a.ID),
			AttrRunID.String(a.RunID),
			AttrStep.Int(a.Step),
		)
		if description != "" {
			ts.span.SetAttributes(semconv.GenAIToolDescription(description))
		}
		if t.content {
			ts.span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(a.Args)))
		}
	}
	return ctx, ts
}

// End ends the call with a's journaled outcome; err is the error that cut the call off, if any
// (then the journal keeps it started for the next attempt).
func (ts *ToolSpan) End(a *carryon.Action, err error) {
	if ts == nil {
		return
	}
	status := string(a.Status)
	if err != nil && a.Status == carryon.ActionStarted {
		status = "interrupted"
	}
	ts.t.metrics.toolCall(a.Tool, string(a.Effect), status, time.Since(ts.start))
	if !ts.span.IsRecording() {
		return
	}
	ts.span.SetAttributes(AttrActionStatus.String(status))
	if ts.t.content && a.Result != "" {
		ts.span.SetAttributes(semconv.GenAIToolCallResultKey.String(a.Result))
	}
	switch {
	case err != nil:
		ts.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		ts.span.SetStatus(codes.Error, err.Error())
	case a.Status == carryon.ActionFailed:
		ts.span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		ts.span.SetStatus(codes.Error, a.Error)
	}
	ts.span.End()
}

// messagesJSON is one message in the GenAI conventions' JSON shape of gen_ai.input.messages and
// gen_ai.output.messages.
func messagesJSON(role, text string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	b, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
	return string(b)
}
