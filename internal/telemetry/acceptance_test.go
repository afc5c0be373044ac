package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// fakeOpenAI is a Chat Completions endpoint: its first answer calls write_file and read_file in
// one step, every later one ends the turn with a text.
func fakeOpenAI(t *testing.T) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		s := modeltest.StartSSE(w)
		if !first {
			s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": "All done."}, nil))
			s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
			s.Data(modeltest.OpenAIUsage(40, 3))
			s.Done()
			return
		}
		call := func(i int, id, name, args string) map[string]any {
			return map[string]any{"index": i, "id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}
		}
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			call(0, "call_write", "write_file", `{"path":"notes.txt","content":"hello"}`),
		}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{"tool_calls": []any{call(1, "call_read", "read_file", `{"path":"notes.txt"}`)}}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "tool_calls"))
		s.Data(modeltest.OpenAIUsage(20, 7))
		s.Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// server is carryon in process with the telemetry given, over a fake OpenAI endpoint, served
// over HTTP like "carryon serve" does.
type server struct {
	url, key string
	reg      *prometheus.Registry
	hub      *app.Hub
	user     context.Context // the local user, for waiting on runs in process
}

func newServer(t *testing.T, tel func(reg *prometheus.Registry) *telemetry.Telemetry) *server {
	t.Helper()
	llm := fakeOpenAI(t)
	getenv := func(k string) string {
		switch k {
		case "OPENAI_BASE_URL":
			return llm.URL + "/v1"
		case "OPENAI_API_KEY":
			return "sk-test"
		}
		return ""
	}
	set, err := agents.FromFlags(agents.Flags{Provider: agents.KindOpenAI, Model: "gpt-test", MaxSteps: 4, ContextBudget: 16000},
		agents.Options{Getenv: getenv, Builtin: app.BuiltinTools(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tl := tel(reg)
	data := t.TempDir()
	h, err := app.Open(t.Context(), app.Options{Data: data, Agents: set, Getenv: getenv, Telemetry: tl, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	telemetry.RegisterActiveRuns(reg, h.ActiveRunCounts)
	key, err := h.Users.EnsureLocalUser(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Config{Sessions: h.Sessions, Users: h.Users, Runs: h.Runs,
		Registry: reg, Telemetry: tl}))
	t.Cleanup(srv.Close)
	u, err := h.Users.Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return &server{url: srv.URL, key: key, reg: reg, hub: h, user: carryon.NewContextWithUser(t.Context(), u)}
}

// call sends a JSON request and decodes a JSON answer into out, failing on a status other than want.
func (s *server) call(t *testing.T, method, path string, body any, header map[string]string, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// runToEnd starts a run on a new session and polls it until it is terminal.
func (s *server) runToEnd(t *testing.T) (sessionID string, run map[string]any) {
	t.Helper()
	var sess struct {
		ID string `json:"id"`
	}
	s.call(t, "POST", "/v1/sessions", map[string]any{"title": "traced"}, nil, 201, &sess)
	var started map[string]any
	s.call(t, "POST", "/v1/sessions/"+sess.ID+"/runs", map[string]any{"message": "write notes.txt, then read it"},
		map[string]string{"Idempotency-Key": "start-1"}, 202, &started)
	id, _ := started["id"].(string)
	ctx, cancel := context.WithTimeout(s.user, 30*time.Second)
	defer cancel()
	if _, err := s.hub.Runs.Wait(ctx, id); err != nil {
		t.Fatalf("wait for run %s: %v", id, err)
	}
	s.call(t, "GET", "/v1/runs/"+id, nil, nil, 200, &run)
	return sess.ID, run
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// wantAttrs fails unless span s has every attribute of want (values as their Emit strings).
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if g, ok := got[attribute.Key(k)]; !ok || g.String() != v {
			t.Errorf("span %q: %s = %q (present %v), want %q", s.Name(), k, g.String(), ok, v)
		}
	}
}

func TestRunWithTwoToolCallsIsTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	srv := newServer(t, func(reg *prometheus.Registry) *telemetry.Telemetry {
		return telemetry.New(telemetry.Options{Exporter: exp, Sync: true, Registerer: reg})
	})
	sessionID, run := srv.runToEnd(t)
	if run["status"] != "succeeded" {
		t.Fatalf("run = %v, want succeeded", run)
	}
	runID := run["id"].(string)
	if run["trace_id"] != carryon.RunTraceID(runID) {
		t.Fatalf("run trace_id = %v, want %s", run["trace_id"], carryon.RunTraceID(runID))
	}
	traceID := telemetry.RunTraceID(runID)

	// The invoke_agent span ends once the run's end is stored, just after the run answers as
	// ended: wait for it (the others ended before).
	var inRun []sdktrace.ReadOnlySpan
	var httpSpans []sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(10 * time.Second); ; {
		inRun, httpSpans = nil, nil
		root := false
		for _, s := range exp.GetSpans().Snapshots() {
			if s.SpanContext().TraceID() == traceID {
				inRun = append(inRun, s)
				root = root || s.Name() == "invoke_agent default"
			} else if s.SpanKind() == trace.SpanKindServer {
				httpSpans = append(httpSpans, s)
			}
		}
		if root || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond) // polling the exporter for the span, with a deadline
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range inRun {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	names := func() []string {
		var out []string
		for _, s := range inRun {
			out = append(out, s.Name())
		}
		return out
	}
	if len(inRun) != 5 || len(byName["invoke_agent default"]) != 1 || len(byName["chat gpt-test"]) != 2 ||
		len(byName["execute_tool write_file"]) != 1 || len(byName["execute_tool read_file"]) != 1 {
		t.Fatalf("spans in the run's trace = %v, want invoke_agent default, 2 × chat gpt-test, execute_tool write_file and read_file", names())
	}
	root := byName["invoke_agent default"][0]
	if root.Parent().IsValid() || root.SpanKind() != trace.SpanKindInternal {
		t.Fatalf("invoke_agent: parent %v kind %v, want a root INTERNAL span", root.Parent(), root.SpanKind())
	}
	wantAttrs(t, root, map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "default", "gen_ai.conversation.id": sessionID,
		"gen_ai.request.model": "gpt-test", "gen_ai.usage.input_tokens": "60", "gen_ai.usage.output_tokens": "10",
		"carryon.run.id": runID, "carryon.run.attempt": "1", "carryon.run.status": "succeeded", "carryon.run.step": "2",
	})
	if v, ok := attrs(root)["carryon.session.version"]; !ok || v.AsInt64() < 4 {
		t.Errorf("invoke_agent carryon.session.version = %v (present %v), want the version of the run's last write", v.AsInt64(), ok)
	}
	for i, s := range byName["chat gpt-test"] {
		if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindClient {
			t.Fatalf("chat span %d: parent %v kind %v, want a CLIENT child of invoke_agent", i, s.Parent().SpanID(), s.SpanKind())
		}
		wantAttrs(t, s, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-test", "gen_ai.response.model": "gpt-test", "gen_ai.response.id": "chatcmpl-test"})
		if _, ok := attrs(s)["gen_ai.input.messages"]; ok {
			t.Errorf("chat span has gen_ai.input.messages without CaptureContent")
		}
	}
	first, second := byName["chat gpt-test"][0], byName["chat gpt-test"][1]
	if first.StartTime().After(second.StartTime()) {
		first, second = second, first
	}
	wantAttrs(t, first, map[string]string{"gen_ai.response.finish_reasons": `["tool_calls"]`,
		"gen_ai.usage.input_tokens": "20", "gen_ai.usage.output_tokens": "7"})
	wantAttrs(t, second, map[string]string{"gen_ai.response.finish_reasons": `["stop"]`,
		"gen_ai.usage.input_tokens": "40", "gen_ai.usage.output_tokens": "3"})
	for name, call := range map[string]string{"write_file": "call_write", "read_file": "call_read"} {
		s := byName["execute_tool "+name][0]
		if s.Parent().SpanID() != root.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindInternal {
			t.Fatalf("execute_tool %s: parent %v kind %v, want an INTERNAL child of invoke_agent", name, s.Parent().SpanID(), s.SpanKind())
		}
		if s.StartTime().Before(first.EndTime()) || s.EndTime().After(second.StartTime()) {
			t.Errorf("execute_tool %s ran outside the two model calls", name)
		}
		effect := "reconcilable"
		if name == "read_file" {
			effect = "read"
		}
		wantAttrs(t, s, map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
			"gen_ai.tool.call.id": call, "carryon.effect": effect, "carryon.action.status": "succeeded", "carryon.run.id": runID})
	}

	// Every request has a server span named by its route; the run's start continues the
	// client's trace when it sends a traceparent.
	var start sdktrace.ReadOnlySpan
	for _, s := range httpSpans {
		if s.Name() == "POST /v1/sessions/{id}/runs" {
			start = s
		}
	}
	if start == nil {
		t.Fatalf("no server span POST /v1/sessions/{id}/runs among %d HTTP spans", len(httpSpans))
	}
	wantAttrs(t, start, map[string]string{"http.request.method": "POST", "http.route": "/v1/sessions/{id}/runs",
		"http.response.status_code": "202"})
	parent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	srv.call(t, "GET", "/v1/runs/"+runID, nil, map[string]string{"traceparent": parent}, 200, nil)
	var continued bool
	for _, s := range exp.GetSpans().Snapshots() {
		if s.SpanContext().TraceID().String() == "0af7651916cd43dd8448eb211c80319c" && s.Parent().SpanID().String() == "b7ad6b7169203331" {
			continued = true
		}
	}
	if !continued {
		t.Errorf("a request with a traceparent did not continue the caller's trace")
	}
}

func TestContentOnlyWhenAskedFor(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	srv := newServer(t, func(reg *prometheus.Registry) *telemetry.Telemetry {
		return telemetry.New(telemetry.Options{Exporter: exp, Sync: true, CaptureContent: true})
	})
	_, run := srv.runToEnd(t)
	traceID := telemetry.RunTraceID(run["id"].(string))
	found := map[string]bool{}
	for _, s := range exp.GetSpans().Snapshots() {
		if s.SpanContext().TraceID() != traceID {
			continue
		}
		a := attrs(s)
		switch {
		case strings.HasPrefix(s.Name(), "chat "):
			if in := a["gen_ai.input.messages"].AsString(); strings.Contains(in, "write notes.txt, then read it") {
				found["input"] = true
			}
			if strings.Contains(a["gen_ai.output.messages"].AsString(), "All done.") {
				found["output"] = true
			}
		case s.Name() == "execute_tool write_file":
			found["arguments"] = strings.Contains(a["gen_ai.tool.call.arguments"].AsString(), `"hello"`)
		case s.Name() == "execute_tool read_file":
			found["result"] = strings.Contains(a["gen_ai.tool.call.result"].AsString(), "hello")
		}
	}
	for _, k := range []string{"input", "output", "arguments", "result"} {
		if !found[k] {
			t.Errorf("with CaptureContent the %s is not in the spans (found %v)", k, found)
		}
	}
}

func TestTracingOffHasNoExporter(t *testing.T) {
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Tracing() {
		t.Fatal("tracing is on without an endpoint")
	}
	if _, ok := tel.TracerProvider().(*sdktrace.TracerProvider); ok {
		t.Fatal("an SDK tracer provider exists without an endpoint")
	}
	srv := newServer(t, func(reg *prometheus.Registry) *telemetry.Telemetry { return tel })
	_, run := srv.runToEnd(t)
	if run["status"] != "succeeded" || run["trace_id"] != carryon.RunTraceID(run["id"].(string)) {
		t.Fatalf("run without tracing = %v, want succeeded with its trace_id", run)
	}
	// A span started without tracing records nothing and is not exported anywhere.
	_, span := tel.StartRun(context.Background(), &carryon.Run{ID: "run_x", Agent: "default"})
	if span.TraceID() != "" {
		t.Fatalf("a run span without tracing has trace id %q", span.TraceID())
	}

	// With an endpoint, Setup makes an exporter (nothing is sent until a span ends).
	on, err := telemetry.Setup(context.Background(), telemetry.Config{Getenv: func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}[k]
	}})
	if err != nil || !on.Tracing() {
		t.Fatalf("Setup with OTEL_EXPORTER_OTLP_ENDPOINT: tracing %v, err %v", on.Tracing(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = on.Shutdown(ctx)
	if _, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: "collector:4318"}); err == nil {
		t.Fatal("an endpoint without a scheme was accepted")
	}
}

func ExampleRunTraceID() {
	fmt.Println(telemetry.RunTraceID("run_example"))
	// Output: 888944549a3083eb0d787a5a99272dc4
}
