package openaiapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
)

// fakeModel is the model of the tests' runs. Asked to hang, it answers nothing until its
// call is abandoned. Offered a client tool get_weather and asked about
// the weather, it calls the tool; given tool results, it answers "Done: " and them; otherwise it
// answers "You said: <the last user message> (<n> user messages)" in several deltas, so that a
// reply shows how much history the model was sent. It keeps every request.
type fakeModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

func (m *fakeModel) Name() string { return "fake" }

func (m *fakeModel) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return func(yield func(model.Chunk, error) bool) {
		var results []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
			results = append([]string{req.Messages[i].Content}, results...)
		}
		if len(results) > 0 {
			yield(model.Chunk{Delta: "Done: " + strings.Join(results, " | "), FinishReason: model.FinishStop}, nil)
			return
		}
		users, last := 0, ""
		for _, msg := range req.Messages {
			if msg.Role == model.RoleUser {
				users, last = users+1, msg.Content
			}
		}
		if strings.Contains(last, "hang") {
			<-ctx.Done() // a model that takes forever, until the run is cancelled
			yield(model.Chunk{}, ctx.Err())
			return
		}
		for _, t := range req.Tools {
			if t.Name == "update_working_memory" && strings.Contains(last, "note it") {
				// A tool of carryon's own: its call and output are stored, and are no output items.
				yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_m1", Name: "update_working_memory", Arguments: json.RawMessage(`{"patch":{"goal":"noted"}}`)}},
					FinishReason: model.FinishToolCalls, Usage: &model.Usage{InputTokens: 10, OutputTokens: 3}}, nil)
				return
			}
			if t.Name == "get_weather" && strings.Contains(last, "weather") {
				yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_w1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}},
					FinishReason: model.FinishToolCalls, Usage: &model.Usage{InputTokens: 10, OutputTokens: 3}}, nil)
				return
			}
		}
		reply := fmt.Sprintf("You said: %s (%d user messages)", last, users)
		words := strings.SplitAfter(reply, " ")
		for i, w := range words {
			c := model.Chunk{Delta: w}
			if i == len(words)-1 {
				c.FinishReason, c.Usage = model.FinishStop, &model.Usage{InputTokens: 7, OutputTokens: len(words)}
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// profiles are the agent profiles of the tests' servers, default and reviewer, both run on one
// engine.
type profiles struct{ eng *engine.Engine }

func (p profiles) Agent(name string) (*carryon.Agent, error) {
	switch name {
	case "", carryon.DefaultAgent:
		return &carryon.Agent{Name: carryon.DefaultAgent, Model: "fake-model", Tools: []carryon.AgentTool{}}, nil
	case "reviewer":
		return &carryon.Agent{Name: "reviewer", Model: "fake-reviewer", Tools: []carryon.AgentTool{}}, nil
	}
	return nil, carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server", name)
}

func (p profiles) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := p.Agent(name); err != nil {
		return nil, err
	}
	return p.eng, nil
}

// startRuns runs a run manager with the model over the store, each delta its own event, with
// the profiles default and reviewer.
func startRuns(t *testing.T, st store.Store, ss *sessions.Service, p model.Provider, data string) *runs.Service {
	t.Helper()
	reg, err := tool.NewRegistry(tool.UpdateWorkingMemory())
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, ss, contextbuild.ModelSummarizer{Provider: p})
	eng := engine.New(engine.Config{Model: "fake-model", Workspaces: filepath.Join(data, "workspaces"), DeltaEvery: time.Nanosecond}, p, reg, builder)
	rs := runs.New(st, ss, nil, runs.Config{Poll: 50 * time.Millisecond, LeaseTTL: 2 * time.Second, Agents: profiles{eng}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rs.Work(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return rs
}
