package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// TestProfileCompactionThreshold: the compaction threshold of the agents file reaches the runs.
// On two sessions with the same long history, a run of the profile with a threshold compacts
// first (one compaction, under the step's request id, made by the profile's model); a run of the
// profile without one does not.
func TestProfileCompactionThreshold(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		answer := "Done."
		if len(req.Messages) > 0 {
			if s, _ := req.Messages[0].Content.(string); strings.HasPrefix(s, contextbuild.SummarizePrompt) {
				answer = "- the user listed modules"
			}
		}
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": answer}, nil))
		s.Data(modeltest.OpenAIChunk(map[string]any{}, "stop"))
		s.Done()
	}))
	defer srv.Close()
	src := `
providers:
  fake: {kind: openai, base_url: "` + srv.URL + `/v1"}
agents:
  default: {provider: fake, model: gpt-4o}
  compacting: {provider: fake, model: gpt-4o, compaction: {threshold_tokens: 400}}
`
	getenv := func(string) string { return "" }
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv, Builtin: app.BuiltinTools(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := app.Open(t.Context(), app.Options{Data: t.TempDir(), Agents: set, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	u, _, err := h.Users.CreateUser(carryon.NewTrustedContext(t.Context()), carryon.NewUser{Name: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(carryon.NewContextWithUser(t.Context(), u), 30*time.Second)
	defer cancel()
	var history []carryon.NewMessage
	for i := range 12 {
		history = append(history, carryon.NewMessage{Role: carryon.RoleUser, Content: fmt.Sprintf("Module %d: list what it imports and which of its functions are slow, with file names.", i)},
			carryon.NewMessage{Role: carryon.RoleAssistant, Content: fmt.Sprintf("Module %d imports three packages; its parser is slow.", i)})
	}
	for _, c := range []struct {
		agent       string
		compactions int
	}{{"compacting", 1}, {"default", 0}} {
		sess, err := h.Sessions.Create(ctx, carryon.NewSession{Agent: c.agent})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Sessions.AppendMessages(ctx, sess.ID, carryon.AppendInput{Messages: history}); err != nil {
			t.Fatal(err)
		}
		run, err := h.Runs.Start(ctx, sess.ID, carryon.NewRun{Message: "go on"})
		if err != nil {
			t.Fatal(err)
		}
		if run, err = h.Runs.Wait(ctx, run.ID); err != nil || run.Status != carryon.RunSucceeded {
			t.Fatalf("%s: run %v %+v", c.agent, err, run)
		}
		page, err := h.Sessions.ListCompactions(ctx, sess.ID)
		if err != nil || len(page.Items) != c.compactions {
			t.Fatalf("%s: %v, %d compactions, want %d", c.agent, err, len(page.Items), c.compactions)
		}
		for _, cp := range page.Items {
			if cp.RequestID != engine.CompactRequestID(run.ID, 1) || cp.Model != "gpt-4o" || cp.Summary != "- the user listed modules" {
				t.Errorf("%s: compaction %+v", c.agent, cp)
			}
		}
	}
}
