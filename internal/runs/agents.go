package runs

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/engine"
)

// Agents is what the run manager needs of the agent profiles: which exist, with the model and
// digest of each (a run records them), and the engine that runs a profile.
type Agents interface {
	carryon.AgentCatalog
	// Engine returns the engine for a run of the named profile, asked when a runner takes the run
	// (so tools found at run time, such as an MCP server's, are the ones offered then). EINVALID
	// for an unknown profile.
	Engine(ctx context.Context, name string) (*engine.Engine, error)
}

// oneAgent is the Agents of a run manager given one engine: the default profile only.
type oneAgent struct{ eng *engine.Engine }

func (o oneAgent) Agent(name string) (*carryon.Agent, error) {
	if name != "" && name != carryon.DefaultAgent {
		return nil, carryon.Errorf(carryon.EINVALID, "agent %q is not a profile of this server; the known ones are: %s", name, carryon.DefaultAgent)
	}
	a := &carryon.Agent{Name: carryon.DefaultAgent, Model: o.eng.Model(), Tools: []carryon.AgentTool{}}
	for _, t := range o.eng.Tools().List() {
		a.Tools = append(a.Tools, carryon.AgentTool{Name: t.Name(), Effect: t.Effect(), Approval: carryon.ApprovalNever})
	}
	return a, nil
}

func (o oneAgent) Engine(_ context.Context, name string) (*engine.Engine, error) {
	if _, err := o.Agent(name); err != nil {
		return nil, err
	}
	return o.eng, nil
}
