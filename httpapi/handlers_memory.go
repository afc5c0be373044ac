package httpapi

import (
	"net/http"

	"github.com/carryon-hub/carryon"
)

// Long-term memory routes: /v1/memories. The caller's memory only; the owner is the key's user.

func (s *server) memoryService() (carryon.MemoryService, error) {
	if s.memory == nil {
		return nil, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server keeps no long-term memory")
	}
	return s.memory, nil
}

func (s *server) handleMemoryPut() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := s.memoryService()
		if err == nil {
			var in carryon.MemoryPut
			if in, err = decode[carryon.MemoryPut](s, r, bodyOptions{}); err == nil {
				in.RetryOptions, err = retryOptions(r, in.RetryOptions)
			}
			if err == nil {
				ctx, rec := receipt(r)
				var it *carryon.MemoryItem
				if it, err = ms.Put(ctx, r.PathValue("namespace"), r.PathValue("key"), in); err == nil {
					markReplay(w, rec)
					s.writeJSON(w, r, http.StatusOK, it)
					return
				}
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleMemoryItemGet() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := s.memoryService()
		if err == nil {
			var it *carryon.MemoryItem
			if it, err = ms.Get(r.Context(), r.PathValue("namespace"), r.PathValue("key")); err == nil {
				s.writeJSON(w, r, http.StatusOK, it)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleMemoryDelete() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := s.memoryService()
		var in carryon.RetryOptions
		if err == nil {
			in, err = decode[carryon.RetryOptions](s, r, bodyOptions{optional: true})
		}
		if err == nil {
			in, err = retryOptions(r, in)
		}
		if err == nil {
			ctx, rec := receipt(r)
			if err = ms.Delete(ctx, r.PathValue("namespace"), r.PathValue("key"), in); err == nil {
				markReplay(w, rec)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleMemoryList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := s.memoryService()
		if err == nil {
			q := &query{values: r.URL.Query()}
			var page *carryon.MemoryPage
			page, err = ms.List(r.Context(), carryon.MemoryFilter{Namespace: q.str("namespace"),
				Limit: int(q.int("limit", 1, carryon.MaxMessageWindow, 0)), Cursor: q.str("cursor")})
			if err == nil {
				s.writeJSON(w, r, http.StatusOK, page)
				return
			}
		}
		s.writeError(w, r, err)
	}
}

func (s *server) handleMemorySearch() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := s.memoryService()
		if err == nil {
			var in carryon.MemorySearch
			if in, err = decode[carryon.MemorySearch](s, r, bodyOptions{}); err == nil {
				var res *carryon.MemoryResults
				if res, err = ms.Search(r.Context(), in); err == nil {
					if res.Items == nil {
						res.Items = []*carryon.MemoryItem{}
					}
					s.writeJSON(w, r, http.StatusOK, res)
					return
				}
			}
		}
		s.writeError(w, r, err)
	}
}
