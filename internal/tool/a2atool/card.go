package a2atool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// card is what the tool reads of an agent card: A2A 1.0's fields, and 0.3's url.
type card struct {
	Name                string `json:"name"`
	Description         string `json:"description"`
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"supportedInterfaces"`
	// URL and PreferredTransport are A2A 0.3's.
	URL                string `json:"url"`
	PreferredTransport string `json:"preferredTransport"`
	ProtocolVersion    string `json:"protocolVersion"`
	Skills             []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"skills"`
}

// endpoint is where an agent's JSON-RPC binding is, and in which version.
type endpoint struct {
	url    string
	legacy bool // A2A 0.3: message/send, kind discriminators, lowercase states
}

// cardURL is where the card of an agent configured at base is.
func cardURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http or https URL", base)
	}
	if strings.HasSuffix(u.Path, ".json") {
		return u.String(), nil
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.ResolveReference(&url.URL{Path: ".well-known/agent-card.json"}).String(), nil
}

// fetchCard reads the card at at and finds its JSON-RPC endpoint.
func (a *Agent) fetchCard(ctx context.Context, at string) (*card, endpoint, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, at, nil)
	if err != nil {
		return nil, endpoint{}, err
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range a.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, endpoint{}, err
	}
	defer resp.Body.Close()
	body, err := readLimited(resp.Body, maxCardBytes)
	if err != nil {
		return nil, endpoint{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, endpoint{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(body))
	}
	var c card
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, endpoint{}, fmt.Errorf("not an agent card (JSON): %v", err)
	}
	ep, err := c.endpoint(at)
	if err != nil {
		return nil, endpoint{}, err
	}
	return &c, ep, nil
}

// endpoint picks the card's JSON-RPC interface, 1.0 before 0.3, resolved against the card's URL.
func (c *card) endpoint(cardAt string) (endpoint, error) {
	base, _ := url.Parse(cardAt)
	var found []endpoint
	for _, i := range c.SupportedInterfaces {
		if !strings.EqualFold(i.ProtocolBinding, "JSONRPC") || i.URL == "" {
			continue
		}
		found = append(found, endpoint{url: i.URL, legacy: strings.HasPrefix(i.ProtocolVersion, "0.")})
	}
	if len(found) == 0 && c.URL != "" && (c.PreferredTransport == "" || strings.EqualFold(c.PreferredTransport, "JSONRPC")) {
		found = append(found, endpoint{url: c.URL, legacy: true})
	}
	if len(found) == 0 {
		return endpoint{}, fmt.Errorf("the card offers no JSON-RPC interface (supportedInterfaces with protocolBinding JSONRPC), the only binding carryon speaks")
	}
	best := found[0]
	for _, e := range found {
		if !e.legacy {
			best = e
			break
		}
	}
	u, err := url.Parse(best.url)
	if err != nil {
		return endpoint{}, fmt.Errorf("the card's interface URL %q: %v", best.url, err)
	}
	best.url = base.ResolveReference(u).String()
	return best, nil
}

// description is what the model is told of the agent: its card's name, description and skills.
func (c *card) description(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Sends a message to the remote agent %s", name)
	if c.Name != "" && c.Name != name {
		fmt.Fprintf(&b, " (%s)", c.Name)
	}
	b.WriteString(" and returns its reply. ")
	if d := strings.TrimSpace(c.Description); d != "" {
		b.WriteString(clipText(d, 600) + " ")
	}
	if len(c.Skills) > 0 {
		b.WriteString("Its skills:")
		for i, s := range c.Skills {
			if i == 12 {
				fmt.Fprintf(&b, " and %d more.", len(c.Skills)-i)
				break
			}
			title := s.Name
			if title == "" {
				title = s.ID
			}
			fmt.Fprintf(&b, " %s", title)
			if d := strings.TrimSpace(s.Description); d != "" {
				fmt.Fprintf(&b, " (%s)", clipText(d, 160))
			}
			b.WriteString(";")
		}
		b.WriteString(" ")
	}
	b.WriteString(conversationNote)
	return b.String()
}

// conversationNote ends every description: how the remote conversation goes on.
const conversationNote = "The remote agent keeps the conversation of this session: a later call continues it, so say only what is new."

// clipText is the start of s, at most n runes.
func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
