package app

import (
	"context"
	"log/slog"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/extraction"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/longtermtool"
	"github.com/carryon-hub/carryon/internal/tool/testtools"
	"github.com/carryon-hub/carryon/internal/tool/workspace"
)

// BuiltinTools are the tools compiled into the server, which agent profiles select from: the
// workspace's files, working memory, long-term memory, and with CARRYON_TEST_TOOLS=1 the
// effect-counting tools of the crash tests and demos.
func BuiltinTools(getenv func(string) string) []tool.Tool {
	all := append(workspace.Tools(), tool.UpdateWorkingMemory())
	all = append(all, longtermtool.Tools()...)
	if getenv("CARRYON_TEST_TOOLS") == "1" {
		all = append(all, testtools.Tools()...)
	}
	return all
}

// profiles runs the agent profiles of a set: one provider client per provider in use, called
// within each profile's model limits, one context builder per profile (its budget, and its instructions after carryon's system prompt), and for
// each run an engine with the profile's tools as they are then. It implements runs.Agents.
type profiles struct {
	*agents.Set
	builtin []tool.Tool
	// sources are the MCP servers' tools by server name; a profile's globs decide which it asks.
	sources    map[string]tool.Source
	byName     map[string]*profileRun
	workspaces string
	longTerm   carryon.LongTermService
	log        *slog.Logger
	tel        *telemetry.Telemetry
}

var _ runs.Agents = (*profiles)(nil)

// profileRun is what every run of one profile shares; fixed is its engine when the profile
// takes tools of no MCP server (its tools cannot change between runs).
type profileRun struct {
	profile  *agents.Profile
	provider model.Provider
	builder  *contextbuild.Builder
	fixed    *engine.Engine
}

// newProfiles prepares the set's profiles to run over the session source; with
// mem, their context gets the owner's relevant long-term memory and their tools can reach it.
// sources are the tools of the MCP servers by the servers' names in the set (nil for none): a
// profile whose globs name a server gets what its source offers when each run starts.
func newProfiles(set *agents.Set, getenv func(string) string, workspaces string, src contextbuild.Source, mem carryon.LongTermService, sources map[string]tool.Source, log *slog.Logger, tel *telemetry.Telemetry) (*profiles, error) {
	p := &profiles{Set: set, builtin: BuiltinTools(getenv), sources: sources, byName: map[string]*profileRun{},
		workspaces: workspaces, longTerm: mem, log: log, tel: tel}
	opened := map[string]model.Provider{}
	for _, name := range set.Names() {
		prof := set.Profiles[name]
		prov := set.Providers[prof.Provider]
		base, ok := opened[prof.Provider]
		if !ok {
			base = prov.Open()
			opened[prof.Provider] = base
		}
		client := tel.Provider(prov.Client(base, prof.ModelLimits), prof.Model)
		cfg := contextbuild.Config{Budget: prof.ContextBudget, SystemPrompt: systemPrompt(prof)}
		cfg.LongTerm = mem != nil
		pr := &profileRun{profile: prof, provider: client,
			builder: contextbuild.New(cfg, src, contextbuild.ModelSummarizer{Provider: client, Model: prof.Model})}
		p.byName[name] = pr
		if !p.usesSources(prof) {
			eng, err := p.engine(context.Background(), pr)
			if err != nil {
				return nil, err
			}
			pr.fixed = eng
		}
	}
	return p, nil
}

// usesSources reports whether one of the profile's MCP servers has a source: then its tools are
// asked for at every run.
func (p *profiles) usesSources(prof *agents.Profile) bool {
	for _, name := range prof.Sources() {
		if _, ok := p.sources[name]; ok {
			return true
		}
	}
	return false
}

// systemPrompt is carryon's system prompt (how sessions and working memory work), then the
// profile's instructions.
func systemPrompt(p *agents.Profile) string {
	if p.Instructions == "" {
		return contextbuild.DefaultSystemPrompt
	}
	return contextbuild.DefaultSystemPrompt + "\n\n" + p.Instructions
}

// Engine returns an engine for a run of the named profile, with the profile's tools as its
// sources offer them now.
func (p *profiles) Engine(ctx context.Context, name string) (*engine.Engine, error) {
	prof, err := p.Profile(name)
	if err != nil {
		return nil, err
	}
	if pr := p.byName[prof.Name]; pr.fixed != nil {
		return pr.fixed, nil
	}
	return p.engine(ctx, p.byName[prof.Name])
}

// engine builds an engine for a run of pr's profile.
func (p *profiles) engine(ctx context.Context, pr *profileRun) (*engine.Engine, error) {
	prof := pr.profile
	tools, missing, err := agents.Tools(ctx, prof, p.builtin, p.sources)
	if missing != nil {
		p.log.Warn("a run goes on without the tools of an MCP server that did not answer", "agent", prof.Name, "err", missing)
	}
	if err != nil {
		// A rule of the file that matches none of the listed tools would leave the tool it was
		// meant for to the default (no approval, unsafe or the server's hint): the run fails
		// instead, before any call, and the operator is told.
		p.log.Error("a run cannot start: the agents file names tools its MCP servers do not list", "agent", prof.Name, "err", err)
		return nil, err
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "the tools of agent %s: %v", prof.Name, err)
	}
	return engine.New(engine.Config{
		Model: prof.Model, MaxSteps: prof.MaxSteps, TokenBudget: prof.RunTokenBudget, CompactThreshold: prof.CompactThreshold,
		Workspaces: p.workspaces, LongTerm: p.longTerm,
		Approval:  func(tool string) bool { return prof.ApprovalOf(tool) == carryon.ApprovalAlways },
		Telemetry: p.tel, Logger: p.log,
	}, pr.provider, reg, pr.builder), nil
}

// Preview is what the model of the session's profile would be sent now.
func (p *profiles) Preview(ctx context.Context, sessions carryon.SessionService, sessionID string) (*carryon.ContextPreview, error) {
	view, err := sessions.Get(ctx, sessionID, carryon.GetOptions{Messages: -1})
	if err != nil {
		return nil, err
	}
	prof, err := p.Profile(view.Agent)
	if err != nil {
		return nil, err
	}
	return p.byName[prof.Name].builder.Preview(ctx, sessionID, prof.Model)
}

// Compact stores a compaction of the session, its summary written by the model of the
// session's profile (sessions.Service.Compact).
func (p *profiles) Compact(ctx context.Context, svc *sessions.Service, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error) {
	return svc.Compact(ctx, sessionID, in, func(ctx context.Context) (carryon.NewMessage, error) {
		view, err := svc.Get(ctx, sessionID, carryon.GetOptions{Messages: -1})
		if err != nil {
			return carryon.NewMessage{}, err
		}
		prof, err := p.Profile(view.Agent)
		if err != nil {
			return carryon.NewMessage{}, err
		}
		plan, err := p.byName[prof.Name].builder.Compact(ctx, sessionID, prof.Model, in.KeepLast, in.Instructions)
		if err != nil {
			return carryon.NewMessage{}, err
		}
		return plan.Summary, nil
	})
}

// Learner returns the extraction of the named profile: its model, and where its facts go
// (false: the profile learns no facts, or there is no such profile).
func (p *profiles) Learner(agent string) (extraction.Learner, bool) {
	prof, err := p.Profile(agent)
	if err != nil || prof.Extraction == nil {
		return extraction.Learner{}, false
	}
	return extraction.Learner{Provider: p.byName[prof.Name].provider, Model: prof.Model,
		Namespace: prof.Extraction.Namespace, Timeout: prof.Extraction.Timeout}, true
}
