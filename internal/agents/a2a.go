package agents

import (
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// A2AToolSuffix ends the name of the one tool a remote A2A agent becomes: NAME__send_message,
// after A2A's SendMessage.
const A2AToolSuffix = "__send_message"

// A2AToolName is the name of the tool the A2A agent called name becomes.
func A2AToolName(name string) string { return name + A2AToolSuffix }

// A2AAgent is a remote agent of the agents file that speaks A2A: a profile that selects its tool
// (NAME__send_message) sends it messages. The header values are secrets: only Headers returns
// them, for the client that calls.
type A2AAgent struct {
	Name string
	// URL is the agent card's URL, or the base the card is found under
	// (BASE/.well-known/agent-card.json).
	URL string
	// HeadersEnv maps a header name to the environment variable that holds its value.
	HeadersEnv map[string]string
	// APIKeyEnv names the variable whose value is sent as "Authorization: Bearer …" ("" for none).
	APIKeyEnv string
	// CallTimeout bounds one call: the send and the wait for the remote task (0: the client's
	// default).
	CallTimeout time.Duration
	// Effect is the effect class the tool declares: unsafe unless the file says otherwise.
	Effect  carryon.EffectClass
	headers map[string]string
}

// Headers returns the headers to send to the agent, their values read at load (secrets: never
// shown or digested). Each call returns a new map.
func (a *A2AAgent) Headers() map[string]string { return maps.Clone(a.headers) }

type rawA2A struct {
	URL         string            `yaml:"url"`
	HeadersEnv  map[string]string `yaml:"headers_env"`
	APIKeyEnv   string            `yaml:"api_key_env"`
	CallTimeout *string           `yaml:"call_timeout"`
	Effect      string            `yaml:"effect"`
}

// a2aAgent checks one entry of a2a_agents; used says whether a profile names it (only then are
// its variables read).
func (v *validator) a2aAgent(at, name string, r *rawA2A, used bool, raw *rawFile) *A2AAgent {
	if !nameRE.MatchString(name) || strings.Contains(name, "__") || len(A2AToolName(name)) > 64 {
		v.fail(at, "an A2A agent's name is 1 to %d letters, digits, _ or - without \"__\" (its tool is named NAME%s)", 64-len(A2AToolSuffix), A2AToolSuffix)
	}
	if _, clash := raw.MCPServers[name]; clash {
		v.fail(at, "mcp_servers has a server of the same name: the tools NAME__* must say whose they are")
	}
	if r == nil {
		v.fail(at, "needs url")
		return nil
	}
	a := &A2AAgent{Name: name, URL: r.URL, HeadersEnv: r.HeadersEnv, APIKeyEnv: r.APIKeyEnv, Effect: carryon.EffectUnsafe, headers: map[string]string{}}
	if u, err := url.Parse(r.URL); r.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.fail(at+".url", "must be the http or https URL of the agent's card or of the base it is under, not %q", r.URL)
	}
	for _, h := range sortedKeys(r.HeadersEnv) {
		env := r.HeadersEnv[h]
		switch {
		case h == "" || strings.ContainsAny(h, " :\r\n"):
			v.fail(at+".headers_env."+h, "is not a header name")
		case r.APIKeyEnv != "" && strings.EqualFold(h, "Authorization"):
			v.fail(at+".headers_env."+h, "api_key_env sets Authorization already: give one of the two")
		case !envRE.MatchString(env):
			v.fail(at+".headers_env."+h, "must name an environment variable (letters, digits, _), not %q", env)
		case used:
			a.headers[h] = v.getenv(env)
			if a.headers[h] == "" {
				v.fail(at+".headers_env."+h, "names %s, which is not set in the environment", env)
			}
		}
	}
	switch {
	case r.APIKeyEnv == "":
	case !envRE.MatchString(r.APIKeyEnv):
		v.fail(at+".api_key_env", "must name an environment variable (letters, digits, _), not %q", r.APIKeyEnv)
	case used:
		key := v.getenv(r.APIKeyEnv)
		if key == "" {
			v.fail(at+".api_key_env", "names %s, which is not set in the environment", r.APIKeyEnv)
		}
		a.headers["Authorization"] = "Bearer " + key
	}
	if r.CallTimeout != nil {
		a.CallTimeout = v.duration(at+".call_timeout", *r.CallTimeout, time.Nanosecond)
	}
	switch e := carryon.EffectClass(r.Effect); e {
	case "":
	case carryon.EffectRead, carryon.EffectIdempotent, carryon.EffectUnsafe:
		a.Effect = e
	default:
		v.fail(at+".effect", "must be read, idempotent or unsafe (the default), not %q: a remote agent cannot be asked whether a call took effect", r.Effect)
	}
	return a
}

// namedTool is a tool known by its name and effect class before anything can call it: an A2A
// agent's, in the public view of a profile (the tool a run gets comes from the agent's source).
type namedTool struct {
	tool.Tool
	name   string
	effect carryon.EffectClass
}

func (t namedTool) Name() string                { return t.name }
func (t namedTool) Effect() carryon.EffectClass { return t.effect }
