package httpapi

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

func (s *server) handleAgents() http.HandlerFunc {
	if s.agents == nil {
		return s.notImplemented("this server lists no agent profiles")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.AgentList, error) {
		return s.agents.ListAgents(r.Context())
	})
}
