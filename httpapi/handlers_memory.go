package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Long-term memory routes: /v1/memories. The caller's memory only; the owner is the key's user.

// withMemory makes a long-term memory route's handler with the memory service; on a server that
// keeps no long-term memory, every such route answers 501.
func (s *server) withMemory(handler func(carryon.MemoryService) http.HandlerFunc) http.HandlerFunc {
	return withService(s, s.memory, "this server keeps no long-term memory", handler)
}

func (s *server) handleMemoryPut() http.HandlerFunc {
	return s.withMemory(func(ms carryon.MemoryService) http.HandlerFunc {
		return writeRoute[carryon.MemoryPut, *carryon.MemoryItem]{
			controls: retryWrite(func(in *carryon.MemoryPut) *carryon.RetryOptions { return &in.RetryOptions }),
			call: func(ctx context.Context, r *http.Request, in carryon.MemoryPut) (*carryon.MemoryItem, error) {
				return ms.Put(ctx, r.PathValue("namespace"), r.PathValue("key"), in)
			},
			status: http.StatusOK,
		}.handler(s)
	})
}

func (s *server) handleMemoryItemGet() http.HandlerFunc {
	return s.withMemory(func(ms carryon.MemoryService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.MemoryItem, error) {
			return ms.Get(r.Context(), r.PathValue("namespace"), r.PathValue("key"))
		})
	})
}

func (s *server) handleMemoryDelete() http.HandlerFunc {
	return s.withMemory(func(ms carryon.MemoryService) http.HandlerFunc {
		return writeRoute[carryon.RetryOptions, struct{}]{
			body:     bodyOptions{optional: true},
			controls: retryWrite(itself[carryon.RetryOptions]),
			call: func(ctx context.Context, r *http.Request, in carryon.RetryOptions) (struct{}, error) {
				return struct{}{}, ms.Delete(ctx, r.PathValue("namespace"), r.PathValue("key"), in)
			},
			status: http.StatusNoContent,
		}.handler(s)
	})
}

func (s *server) handleMemoryList() http.HandlerFunc {
	return s.withMemory(func(ms carryon.MemoryService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, q *query) (*carryon.MemoryPage, error) {
			return ms.List(r.Context(), carryon.MemoryFilter{Namespace: q.str("namespace"),
				Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor")})
		})
	})
}

// handleMemorySearch serves a read that takes a body (the query may be long); it is no write.
func (s *server) handleMemorySearch() http.HandlerFunc {
	return s.withMemory(func(ms carryon.MemoryService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.MemoryResults, error) {
			in, err := decode[carryon.MemorySearch](s, r, bodyOptions{})
			var res *carryon.MemoryResults
			if err == nil {
				res, err = ms.Search(r.Context(), in)
			}
			if err == nil {
				res.Items = orEmpty(res.Items)
			}
			return res, err
		})
	})
}
