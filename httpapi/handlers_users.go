package httpapi

import (
	"net/http"
	"net/url"

	"github.com/carryon-hub/carryon"
)

func (s *server) handleMe() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, r, http.StatusOK, carryon.UserFromContext(r.Context()))
	}
}

func (s *server) handleUserCreate() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.NewUser](s, r, bodyOptions{})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		u, key, err := s.users.CreateUser(r.Context(), in)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Location", "/v1/users/"+url.PathEscape(u.ID))
		w.Header().Set("Cache-Control", "no-store")
		s.writeJSON(w, r, http.StatusCreated, CreateUserResponse{User: u, Key: key})
	}
}

func (s *server) handleUserList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		users, err := s.users.ListUsers(r.Context())
		var out UserList
		if err == nil {
			out.Items, out.NextCursor, err = pageOf(users, func(u *carryon.User) string { return u.Name }, &query{values: r.URL.Query()})
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleKeyCreate() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k, secret, err := s.users.CreateKey(r.Context(), r.PathValue("id"))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Location", "/v1/keys/"+url.PathEscape(k.ID))
		w.Header().Set("Cache-Control", "no-store")
		s.writeJSON(w, r, http.StatusCreated, CreateKeyResponse{Key: k, Secret: secret})
	}
}

func (s *server) handleKeyList() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		keys, err := s.users.ListKeys(r.Context(), r.PathValue("id"))
		var out KeyList
		if err == nil {
			out.Items, out.NextCursor, err = pageOf(keys, keyKey, &query{values: r.URL.Query()})
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleKeyRevoke() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[carryon.RetryOptions](s, r, bodyOptions{optional: true})
		if err == nil {
			in, err = retryOptions(r, in)
		}
		ctx, rec := receipt(r)
		if err == nil {
			err = s.users.RevokeKey(ctx, r.PathValue("id"), in)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		markReplay(w, rec)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *server) handleHealth() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, r, http.StatusOK, Health{Status: "ok"})
	}
}

// handleReady answers 200 when cfg.Ready passes and 503 otherwise. The failure is logged; only a
// carryon error's message reaches the client.
func (s *server) handleReady() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.ready != nil {
			if err := s.ready(r.Context()); err != nil {
				s.logger.WarnContext(r.Context(), "not ready", "err", err)
				msg := "the server is not ready"
				if e, ok := carryon.AsError(err); ok {
					msg += ": " + e.Message
				}
				w.Header().Set("Retry-After", "1")
				s.writeError(w, r, carryon.Errorf(carryon.EUNAVAILABLE, "%s", msg))
				return
			}
		}
		s.writeJSON(w, r, http.StatusOK, Health{Status: "ready"})
	}
}
