package agents

import (
	"fmt"
	"os"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// Flags are the server's agent flags (--provider, --model, --scripted-delay, --max-steps,
// --context-budget, --run-token-budget and the --model-* limits), which make the one profile
// of a server started without an agents file.
type Flags struct {
	Provider       string
	Model          string
	ScriptedDelay  time.Duration
	MaxSteps       int
	ContextBudget  int
	RunTokenBudget int
	// ModelLimits bound each model call; zero fields take the defaults (DefaultModelLimits).
	ModelLimits model.Limits
}

// FromFlags returns the set of one profile, named default, that the flags describe: the agent a
// server ran before agents files, unchanged. Its provider is named after its kind and reads its
// key and endpoint from the variables the providers always read (OPENAI_API_KEY and
// OPENAI_BASE_URL, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL); it has every built-in tool.
func FromFlags(f Flags, opt Options) (*Set, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	prov := &Provider{Name: f.Provider, Kind: f.Provider}
	switch f.Provider {
	case KindScripted:
		prov.Delay = f.ScriptedDelay
	case KindOpenAI, KindAnthropic:
		keyEnv, baseEnv := "OPENAI_API_KEY", "OPENAI_BASE_URL"
		if f.Provider == KindAnthropic {
			keyEnv, baseEnv = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
		}
		prov.APIKeyEnv, prov.apiKey, prov.BaseURL = keyEnv, opt.Getenv(keyEnv), opt.Getenv(baseEnv)
		if prov.apiKey == "" && prov.BaseURL == "" {
			return nil, fmt.Errorf("%s: %s is not set (it may be empty only when %s points at a local server)", f.Provider, keyEnv, baseEnv)
		}
	default:
		return nil, carryon.Errorf(carryon.EINVALID, "--provider must be scripted, openai or anthropic, not %q", f.Provider)
	}
	// As before profiles: a limit of 0 or less takes the default (no limit for the token budget).
	if f.MaxSteps <= 0 {
		f.MaxSteps = DefaultMaxSteps
	}
	if f.ContextBudget <= 0 {
		f.ContextBudget = DefaultContextBudget
	}
	f.RunTokenBudget = max(f.RunTokenBudget, 0)
	p := &Profile{Name: carryon.DefaultAgent, Provider: prov.Name, Model: f.Model, Tools: []string{},
		Effects: map[string]carryon.EffectClass{}, Approval: map[string]string{},
		MaxSteps: f.MaxSteps, ContextBudget: f.ContextBudget, RunTokenBudget: f.RunTokenBudget,
		ModelLimits: withDefaults(f.ModelLimits)}
	if p.Model == "" {
		p.Model = defaultModels[prov.Kind]
	}
	for _, t := range opt.Builtin {
		p.Tools = append(p.Tools, t.Name())
	}
	set := &Set{Providers: map[string]*Provider{prov.Name: prov}, MCPServers: map[string]*MCPServer{}, Profiles: map[string]*Profile{p.Name: p}}
	set.finish(opt.Builtin)
	return set, nil
}
