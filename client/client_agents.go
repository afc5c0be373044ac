package client

import (
	"context"

	"github.com/carryon-hub/carryon"
)

var _ carryon.AgentService = (*Client)(nil)

// ListAgents lists the server's agent profiles (GET /v1/agents).
func (c *Client) ListAgents(ctx context.Context) (*carryon.AgentList, error) {
	var out carryon.AgentList
	if err := c.do(ctx, call{method: "GET", path: "/v1/agents"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
