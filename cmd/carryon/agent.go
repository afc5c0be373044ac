package main

import (
	"flag"
	"path/filepath"
	"time"

	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/app"
	"github.com/carryon-hub/carryon/internal/model"
)

// agentFlags choose the agent profiles: an agents file, or the flags of the one default profile.
type agentFlags struct {
	file            string
	provider, model string
	scriptedDelay   time.Duration
	maxSteps        int
	tokenBudget     int
	contextBudget   int
	modelLimits     model.Limits
	workspaces      string
}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.file, "agents", "", "agents file (YAML or JSON): providers, MCP servers and agent profiles (docs/AGENTS.md); without it the flags --provider, --model, --scripted-delay, --max-steps, --run-token-budget and --context-budget make the one profile, named default (and the --model-* limits of its model calls)")
	fs.StringVar(&a.provider, "provider", "scripted", "model provider: scripted (offline, no key), openai (any OpenAI-compatible endpoint: OPENAI_API_KEY, OPENAI_BASE_URL) or anthropic (ANTHROPIC_API_KEY)")
	fs.StringVar(&a.model, "model", "", "model name, e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5")
	fs.DurationVar(&a.scriptedDelay, "scripted-delay", 0, "latency the scripted model adds per step, e.g. 700ms")
	fs.IntVar(&a.maxSteps, "max-steps", 12, "model calls one run may make")
	fs.IntVar(&a.tokenBudget, "run-token-budget", 0, "tokens one run may use, 0 for no limit")
	fs.StringVar(&a.workspaces, "workspaces", "", "directory of the sessions' workspaces; default DATA/workspaces; instances that share a database should share it too")
	fs.IntVar(&a.contextBudget, "context-budget", 16000, "input tokens of one model call")
	fs.DurationVar(&a.modelLimits.FirstByte, "model-first-byte-timeout", agents.DefaultModelFirstByteTimeout, "longest wait for a model's response headers; past it the call fails with model_timeout (retried)")
	fs.DurationVar(&a.modelLimits.Idle, "model-idle-timeout", agents.DefaultModelIdleTimeout, "longest silence inside a model's answer; past it the call fails with model_timeout")
	fs.DurationVar(&a.modelLimits.Total, "model-timeout", agents.DefaultModelTimeout, "longest one model call may take; past it the call fails with model_timeout")
	fs.IntVar(&a.modelLimits.MaxOutputBytes, "model-max-output-bytes", agents.DefaultModelMaxOutputBytes, "most bytes of text and tool-call arguments one model call may write; past it the call fails with model_output_limit (not retried)")
}

// load returns the agent profiles: those of the agents file, or the default one of the flags.
func (a *agentFlags) load(getenv env) (*agents.Set, error) {
	opt := agents.Options{Getenv: getenv, Builtin: app.BuiltinTools(getenv)}
	if a.file != "" {
		return agents.Load(a.file, opt)
	}
	return agents.FromFlags(agents.Flags{
		Provider: a.provider, Model: a.model, ScriptedDelay: a.scriptedDelay,
		MaxSteps: a.maxSteps, ContextBudget: a.contextBudget, RunTokenBudget: a.tokenBudget,
		ModelLimits: a.modelLimits,
	}, opt)
}

// ignoredBy returns the profile flags fs was given (on the command line or by their variables)
// that an agents file makes unused, as --name.
func (a *agentFlags) ignoredBy(fs *flag.FlagSet) []string {
	if a.file == "" {
		return nil
	}
	var out []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "provider", "model", "scripted-delay", "max-steps", "run-token-budget", "context-budget",
			"model-first-byte-timeout", "model-idle-timeout", "model-timeout", "model-max-output-bytes":
			out = append(out, "--"+f.Name)
		}
	})
	return out
}

// workspacesDir is the directory of the sessions' workspaces: --workspaces, or DATA/workspaces.
func (a *agentFlags) workspacesDir(data string) string {
	if a.workspaces != "" {
		return a.workspaces
	}
	return filepath.Join(data, "workspaces")
}
