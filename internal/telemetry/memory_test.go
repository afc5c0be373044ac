package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// TestLearnedFactsAreTraced: an extraction's write of the facts it learned is a create_memory
// span when every fact made an item, and an update_memory span when facts consolidated into
// items there already, with the namespace, the record count and the session.
func TestLearnedFactsAreTraced(t *testing.T) {
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": `{"facts": ["Is vegetarian.", "Lives in Lisbon."]}`}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	t.Cleanup(llm.Close)
	set, err := agents.Parse("agents.yaml", []byte(`
providers:
  fake: {kind: openai, base_url: "`+llm.URL+`/v1"}
agents:
  default: {provider: fake, model: m1, memory_extraction: {namespace: learned, idle_after: 0s}}
`), agents.Options{Builtin: app.BuiltinTools(func(string) string { return "" })})
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	data := t.TempDir()
	h, err := app.Open(t.Context(), app.Options{Data: data, Agents: set, Getenv: func(string) string { return "" },
		Telemetry: telemetry.New(telemetry.Options{Exporter: exp, Sync: true}), NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	key, err := h.Users.EnsureLocalUser(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	u, err := h.Users.Authenticate(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := carryon.NewContextWithUser(t.Context(), u)
	sess, err := h.Sessions.CreateSession(ctx, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"I'm vegetarian and live in Lisbon.", "Still vegetarian, still in Lisbon."} {
		if _, err := h.Sessions.AppendMessages(ctx, sess.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: text}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Extract(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range exp.GetSpans().Snapshots() {
		attrs := attribute.NewSet(s.Attributes()...)
		op, _ := attrs.Value("gen_ai.operation.name")
		if op.AsString() != telemetry.OpCreateMemory && op.AsString() != telemetry.OpUpdateMemory {
			continue
		}
		store, _ := attrs.Value("gen_ai.memory.store.id")
		count, _ := attrs.Value("gen_ai.memory.record.count")
		updated, _ := attrs.Value("carryon.memory.updated_count")
		conv, _ := attrs.Value("gen_ai.conversation.id")
		if store.AsString() != "learned" || count.AsInt64() != 2 || conv.AsString() != sess.ID {
			t.Errorf("span %s: store %q, records %d, conversation %q", s.Name(), store.AsString(), count.AsInt64(), conv.AsString())
		}
		got = append(got, s.Name()+" updated="+updated.String())
	}
	want := []string{"create_memory learned updated=0", "update_memory learned updated=2"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("memory spans = %v, want %v", got, want)
	}
}
