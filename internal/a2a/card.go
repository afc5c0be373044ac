package a2a

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
)

// card is an agent card (A2A 1.0's AgentCard, protojson names).
type card struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []agentInterface          `json:"supportedInterfaces"`
	Provider             map[string]string         `json:"provider"`
	Version              string                    `json:"version"`
	Capabilities         map[string]bool           `json:"capabilities"`
	SecuritySchemes      map[string]map[string]any `json:"securitySchemes"`
	SecurityRequirements []map[string]any          `json:"securityRequirements"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []skill                   `json:"skills"`
}

type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

// serveCard answers the agent card of a profile ("" for the default one).
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request, agent string) {
	name := agent
	if name == "" {
		name = carryon.DefaultAgent
	}
	a, err := h.agents.Agent(name)
	if err != nil {
		writeRefusal(w, carryon.Errorf(carryon.ENOTFOUND, "no agent profile %q", name))
		return
	}
	endpoint := baseURL(r) + Prefix
	if agent != "" {
		endpoint += "/" + agent
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, cardOf(a, endpoint))
}

// cardOf is the card of profile a served at endpoint.
func cardOf(a *carryon.Agent, endpoint string) card {
	// The card is public: it says what the profile can do, never its instructions (its prompt
	// is for those with a key, GET /v1/agents).
	desc := fmt.Sprintf("carryon agent profile %q (model %s): a durable conversation per contextId, with the tools listed as skills.", a.Name, a.Model)
	c := card{
		Name:        a.Name,
		Description: desc,
		SupportedInterfaces: []agentInterface{
			{URL: endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
			{URL: endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		},
		Provider:     map[string]string{"organization": "carryon", "url": "https://github.com/carryon-hub/carryon"},
		Version:      carryon.Version,
		Capabilities: map[string]bool{"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
		SecuritySchemes: map[string]map[string]any{"bearer": {"httpAuthSecurityScheme": map[string]string{
			"scheme": "Bearer", "description": "a carryon API key (carryon users create; the local user's key file)"}}},
		SecurityRequirements: []map[string]any{{"schemes": map[string]any{"bearer": map[string]any{}}}},
		DefaultInputModes:    []string{"text/plain", "application/json"},
		DefaultOutputModes:   []string{"text/plain"},
	}
	chat := "Answers messages in a durable conversation: a contextId keeps the history."
	c.Skills = append(c.Skills, skill{ID: "conversation", Name: "Conversation", Description: chat, Tags: []string{"chat"}})
	for _, t := range a.Tools {
		d := fmt.Sprintf("Uses the tool %s (effect %s", t.Name, t.Effect)
		if t.Approval == carryon.ApprovalAlways {
			d += "; every call waits for your approval: the task is input-required until you answer"
		}
		d += ")."
		tags := []string{"tool", string(t.Effect)}
		if t.MCPServer != "" {
			tags = append(tags, "mcp:"+t.MCPServer)
		}
		if t.A2AAgent != "" {
			tags = append(tags, "a2a:"+t.A2AAgent)
		}
		c.Skills = append(c.Skills, skill{ID: t.Name, Name: t.Name, Description: d, Tags: tags})
	}
	return c
}

// baseURL is the scheme and host the request came to.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
