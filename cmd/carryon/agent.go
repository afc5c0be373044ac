package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/contextbuild"
	"github.com/carryon-hub/carryon/engine"
	"github.com/carryon-hub/carryon/model"
	"github.com/carryon-hub/carryon/model/anthropic"
	"github.com/carryon-hub/carryon/model/openai"
	"github.com/carryon-hub/carryon/model/scripted"
	"github.com/carryon-hub/carryon/tool"
	"github.com/carryon-hub/carryon/tool/longtermtool"
	"github.com/carryon-hub/carryon/tool/testtools"
	"github.com/carryon-hub/carryon/tool/workspace"
)

// agentFlags choose the model and shape the agent loop.
type agentFlags struct {
	provider, model string
	scriptedDelay   time.Duration
	maxSteps        int
	tokenBudget     int
	contextBudget   int
	workspaces      string
}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.provider, "provider", "scripted", "model provider: scripted (offline, no key), openai (any OpenAI-compatible endpoint: OPENAI_API_KEY, OPENAI_BASE_URL) or anthropic (ANTHROPIC_API_KEY)")
	fs.StringVar(&a.model, "model", "", "model name, e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5")
	fs.DurationVar(&a.scriptedDelay, "scripted-delay", 0, "latency the scripted model adds per step, e.g. 700ms")
	fs.IntVar(&a.maxSteps, "max-steps", 12, "model calls one run may make")
	fs.IntVar(&a.tokenBudget, "run-token-budget", 0, "tokens one run may use, 0 for no limit")
	fs.StringVar(&a.workspaces, "workspaces", "", "directory of the sessions' workspaces; default DATA/workspaces; instances that share a database should share it too")
	fs.IntVar(&a.contextBudget, "context-budget", 16000, "input tokens of one model call")
}

// newEngine builds the agent engine: the provider with bounded retries, the built-in tools and
// the context builder over the session source. With mem, the agent also gets
// remember and recall and its context the owner's relevant long-term memory.
func (a *agentFlags) newEngine(getenv env, data string, src contextbuild.Source, mem carryon.LongTermService) (*engine.Engine, error) {
	var p model.Provider
	name := a.model
	switch a.provider {
	case "scripted":
		p = scripted.New(a.scriptedDelay)
		if name == "" {
			name = "scripted"
		}
	case "openai":
		if name == "" {
			name = "gpt-4o-mini"
		}
		op, err := openai.FromEnv(getenv, name)
		if err != nil {
			return nil, err
		}
		p = model.WithRetry(op, model.RetryPolicy{})
	case "anthropic":
		if name == "" {
			name = "claude-sonnet-4-5"
		}
		ap, err := anthropic.FromEnv(getenv, name)
		if err != nil {
			return nil, err
		}
		p = model.WithRetry(ap, model.RetryPolicy{})
	default:
		return nil, usagef("--provider must be scripted, openai or anthropic, not %q", a.provider)
	}
	all := append(workspace.Tools(), tool.UpdateWorkingMemory())
	cfg := contextbuild.Config{Budget: a.contextBudget}
	if mem != nil {
		all = append(all, longtermtool.Tools()...)
		cfg.LongTerm = true
	}
	if getenv("CARRYON_TEST_TOOLS") == "1" {
		all = append(all, testtools.Tools()...) // effect-counting tools for crash tests and demos
	}
	tools, err := tool.NewRegistry(all...)
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	builder := contextbuild.New(cfg, src, contextbuild.ModelSummarizer{Provider: p, Model: name})
	return engine.New(engine.Config{
		Model: name, MaxSteps: a.maxSteps, TokenBudget: a.tokenBudget, Workspaces: a.workspacesDir(data), LongTerm: mem,
	}, p, tools, builder), nil
}

// workspacesDir is the directory of the sessions' workspaces: --workspaces, or DATA/workspaces.
func (a *agentFlags) workspacesDir(data string) string {
	if a.workspaces != "" {
		return a.workspaces
	}
	return filepath.Join(data, "workspaces")
}
