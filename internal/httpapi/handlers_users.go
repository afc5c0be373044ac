package httpapi

import (
	"context"
	"net/http"
	"net/url"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

func (s *server) handleMe() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, r, http.StatusOK, carryon.UserFromContext(r.Context()))
	}
}

func (s *server) handleSettings() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := s.users.Settings(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, http.StatusOK, out)
	}
}

func (s *server) handleSettingsUpdate() http.HandlerFunc {
	return bodyCall(s, bodyOptions{mergePatch: true}, http.StatusOK, func(r *http.Request, in carryon.UserSettingsPatch) (*carryon.UserSettings, error) {
		return s.users.UpdateSettings(r.Context(), in)
	})
}

func (s *server) handleUserCreate() http.HandlerFunc {
	return writeRoute[carryon.NewUser, wire.CreateUserResponse]{
		call: func(ctx context.Context, _ *http.Request, in carryon.NewUser) (wire.CreateUserResponse, error) {
			u, key, err := s.users.CreateUser(ctx, in)
			return wire.CreateUserResponse{User: u, Key: key}, err
		},
		status: http.StatusCreated,
		location: func(_ *http.Request, out wire.CreateUserResponse) string {
			return "/v1/users/" + url.PathEscape(out.User.ID)
		},
		noStore: true,
	}.handler(s)
}

func (s *server) handleUserList() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (wire.UserList, error) {
		users, err := s.users.ListUsers(r.Context())
		var out wire.UserList
		if err == nil {
			out.Items, out.NextCursor, err = pageOf(users, func(u *carryon.User) string { return u.Name }, q)
		}
		return out, err
	})
}

func (s *server) handleUserGet() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, _ *query) (*carryon.User, error) {
		return s.users.GetUser(r.Context(), r.PathValue("id"))
	})
}

// handleUserForget forgets a user. It takes no request id: the forget is many transactions, not
// one, and a repeat of it either continues it or finds the user gone (404).
func (s *server) handleUserForget() http.HandlerFunc {
	return writeRoute[struct{}, *carryon.ForgetReceipt]{
		read: noBody,
		call: func(ctx context.Context, r *http.Request, _ struct{}) (*carryon.ForgetReceipt, error) {
			return s.users.ForgetUser(ctx, r.PathValue("id"))
		},
		status:  http.StatusOK,
		noStore: true,
	}.handler(s)
}

func (s *server) handleKeyCreate() http.HandlerFunc {
	return writeRoute[struct{}, wire.CreateKeyResponse]{
		read: noBody,
		call: func(ctx context.Context, r *http.Request, _ struct{}) (wire.CreateKeyResponse, error) {
			k, secret, err := s.users.CreateKey(ctx, r.PathValue("id"))
			return wire.CreateKeyResponse{Key: k, Secret: secret}, err
		},
		status: http.StatusCreated,
		location: func(_ *http.Request, out wire.CreateKeyResponse) string {
			return "/v1/keys/" + url.PathEscape(out.Key.ID)
		},
		noStore: true,
	}.handler(s)
}

func (s *server) handleKeyList() http.HandlerFunc {
	return readRoute(s, func(r *http.Request, q *query) (wire.KeyList, error) {
		keys, err := s.users.ListKeys(r.Context(), r.PathValue("id"))
		var out wire.KeyList
		if err == nil {
			out.Items, out.NextCursor, err = pageOf(keys, keyKey, q)
		}
		return out, err
	})
}

func (s *server) handleKeyRevoke() http.HandlerFunc {
	return writeRoute[carryon.RetryOptions, struct{}]{
		body:     bodyOptions{optional: true},
		controls: retryWrite(itself[carryon.RetryOptions]),
		call:     onID(noResult(s.users.RevokeKey)),
		status:   http.StatusNoContent,
	}.handler(s)
}

func (s *server) handleHealth() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, r, http.StatusOK, wire.Health{Status: "ok"})
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
		s.writeJSON(w, r, http.StatusOK, wire.Health{Status: "ready"})
	}
}

// handleLimitsGet answers a user's limits (GET /v1/users/{id}/limits).
func (s *server) handleLimitsGet() http.HandlerFunc {
	return withService(s, s.limitService, "this server keeps no per-user limits", func(ls carryon.LimitService) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*carryon.UserLimits, error) {
			return ls.GetLimits(r.Context(), r.PathValue("id"))
		})
	})
}

// handleLimitsPut replaces a user's limits (PUT /v1/users/{id}/limits). It takes no request id:
// it sets the limits to values, and a repeat sets them again and answers the same.
func (s *server) handleLimitsPut() http.HandlerFunc {
	return withService(s, s.limitService, "this server keeps no per-user limits", func(ls carryon.LimitService) http.HandlerFunc {
		return writeRoute[carryon.Limits, *carryon.UserLimits]{
			call: func(ctx context.Context, r *http.Request, in carryon.Limits) (*carryon.UserLimits, error) {
				return ls.SetLimits(ctx, r.PathValue("id"), in)
			},
			status: http.StatusOK,
		}.handler(s)
	})
}
