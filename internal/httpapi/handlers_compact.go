package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

func (s *server) handleCompact() http.HandlerFunc {
	if s.compact == nil {
		return s.notImplemented("this server has no summarizer to compact sessions with")
	}
	return writeRoute[carryon.CompactInput, *carryon.Compaction]{
		body:     bodyOptions{optional: true},
		controls: sessionWrite(func(in *carryon.CompactInput) *carryon.WriteOptions { return &in.WriteOptions }, true),
		call: func(ctx context.Context, r *http.Request, in carryon.CompactInput) (*carryon.Compaction, error) {
			return s.compact(ctx, r.PathValue("id"), in)
		},
		status:  http.StatusCreated,
		version: func(c *carryon.Compaction) int64 { return c.Version },
		// Where the compaction is listed with the session's others.
		location: func(r *http.Request, _ *carryon.Compaction) string {
			return sessionPath(r.PathValue("id")) + "/compactions"
		},
	}.handler(s)
}

func (s *server) handleCompactions() http.HandlerFunc {
	if s.compactions == nil {
		return s.notImplemented("this server keeps no compactions")
	}
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.CompactionPage, error) {
		return s.compactions(r.Context(), r.PathValue("id"))
	})
}

// handleExtract serves a write without a request id: the session's extraction mark makes it
// happen once per turn, so a repeat answers the facts of newer turns only (none: an empty list).
func (s *server) handleExtract() http.HandlerFunc {
	if s.extract == nil {
		return s.notImplemented("this server learns no facts from sessions")
	}
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := s.extract(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}
