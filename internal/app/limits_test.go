package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/model/modeltest"
)

// TestProfileModelLimits: the model limits of the agents file reach the runs. Against an
// OpenAI-compatible server that streams without end, a profile's run fails at its output bound
// (model_output_limit, asked once); against one that stops after its first words, another
// profile's run fails at its idle bound (model_timeout, not asked again: words had come).
func TestProfileModelLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		asked[req.Model]++
		mu.Unlock()
		s := modeltest.StartSSE(w)
		s.Data(modeltest.OpenAIChunk(map[string]any{"role": "assistant", "content": "Working on it. "}, nil))
		if req.Model == "stalls" {
			<-r.Context().Done()
			return
		}
		tick := time.NewTicker(5 * time.Millisecond) // the server's pace: 200 chunks of 512 bytes a second
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				s.Data(modeltest.OpenAIChunk(map[string]any{"content": strings.Repeat("z", 512)}, nil))
			}
		}
	}))
	defer srv.Close()
	src := `
providers:
  fake: {kind: openai, base_url: "` + srv.URL + `/v1"}
agents:
  default:
    provider: fake
    model: endless
    model_max_output_bytes: 8192
  stalling:
    provider: fake
    model: stalls
    model_idle_timeout: 200ms
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
	// The deadline of the test: far past both bounds; a run nothing bounds would reach it.
	ctx, cancel := context.WithTimeout(carryon.NewContextWithUser(t.Context(), u), 30*time.Second)
	defer cancel()
	for _, c := range []struct{ agent, model, code, limit string }{
		{"default", "endless", "model_output_limit", "output limit"},
		{"stalling", "stalls", "model_timeout", "idle timeout"},
	} {
		sess, err := h.Sessions.Create(ctx, carryon.NewSession{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := h.Runs.Start(ctx, sess.ID, carryon.NewRun{Message: "go on", Agent: c.agent})
		if err != nil {
			t.Fatal(err)
		}
		events, err := h.Runs.Events(ctx, run.ID, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, ok, err := events.Next()
			if err != nil {
				t.Fatalf("%s: following the run: %v", c.agent, err)
			}
			if !ok {
				break
			}
		}
		events.Close()
		got, err := h.Runs.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != carryon.RunFailed || !strings.Contains(got.Error, c.code) || !strings.Contains(got.Error, c.limit) {
			t.Errorf("%s: run %s: %q, want failed with %s (%s)", c.agent, got.Status, got.Error, c.code, c.limit)
		}
		mu.Lock()
		if asked[c.model] != 1 {
			t.Errorf("%s: the model was asked %d times, want once", c.agent, asked[c.model])
		}
		mu.Unlock()
	}
}
