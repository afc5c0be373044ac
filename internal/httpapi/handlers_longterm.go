package httpapi

import (
	"context"
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Long-term memory routes: /v1/memories. The caller's memory only; the owner is the key's user.

// withLongTerm makes a long-term memory route's handler with the memory service; on a server that
// keeps no long-term memory, every such route answers 501.
func (s *server) withLongTerm(handler func(carryon.LongTermService) http.HandlerFunc) http.HandlerFunc {
	return withService(s, s.longTerm, "this server keeps no long-term memory", handler)
}

func (s *server) handleLongTermPut() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return writeRoute[carryon.LongTermPut, *carryon.LongTermItem]{
			controls: itemWrite(func(in *carryon.LongTermPut) *carryon.WriteOptions { return &in.WriteOptions }),
			call: func(ctx context.Context, r *http.Request, in carryon.LongTermPut) (*carryon.LongTermItem, error) {
				return ms.Put(ctx, r.PathValue("namespace"), r.PathValue("key"), in)
			},
			status:  http.StatusOK,
			version: func(it *carryon.LongTermItem) int64 { return it.Version },
		}.handler(s)
	})
}

func (s *server) handleLongTermAdd() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return writeRoute[carryon.LongTermAdd, *carryon.LongTermAdded]{
			controls: retryWrite(func(in *carryon.LongTermAdd) *carryon.RetryOptions { return &in.RetryOptions }),
			call: func(ctx context.Context, r *http.Request, in carryon.LongTermAdd) (*carryon.LongTermAdded, error) {
				return ms.Add(ctx, r.PathValue("namespace"), in)
			},
			status:  http.StatusOK,
			version: func(a *carryon.LongTermAdded) int64 { return a.Version },
		}.handler(s)
	})
}

func (s *server) handleLongTermVersions() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.LongTermVersions, error) {
			return ms.Versions(r.Context(), r.PathValue("namespace"), r.PathValue("key"))
		})
	})
}

func (s *server) handleLongTermItemGet() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			it, err := ms.Get(r.Context(), r.PathValue("namespace"), r.PathValue("key"))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			setETag(w, it.Version) // what If-Match names for a read-modify-write
			s.writeJSON(w, r, http.StatusOK, it)
		}
	})
}

func (s *server) handleLongTermDelete() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return writeRoute[carryon.WriteOptions, struct{}]{
			body:     bodyOptions{optional: true},
			controls: itemWrite(itself[carryon.WriteOptions]),
			call: func(ctx context.Context, r *http.Request, in carryon.WriteOptions) (struct{}, error) {
				return struct{}{}, ms.Delete(ctx, r.PathValue("namespace"), r.PathValue("key"), in)
			},
			status: http.StatusNoContent,
		}.handler(s)
	})
}

func (s *server) handleLongTermList() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, q *query) (*carryon.LongTermPage, error) {
			return ms.List(r.Context(), carryon.LongTermFilter{Namespace: q.str("namespace"),
				Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor")})
		})
	})
}

// handleLongTermSearch serves a read that takes a body (the query may be long); it is no write.
func (s *server) handleLongTermSearch() http.HandlerFunc {
	return s.withLongTerm(func(ms carryon.LongTermService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.LongTermResults, error) {
			in, err := decode[carryon.LongTermSearch](s, r, bodyOptions{})
			var res *carryon.LongTermResults
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
