package httpapi

import (
	"net/http"

	"github.com/carryon-hub/carryon/internal/webhooks"
)

// Webhook routes: /v1/webhooks. The caller's webhooks only: another user's is 404.

// withWebhooks makes a webhook route's handler; on a server without webhooks it answers 501.
func (s *server) withWebhooks(handler func(webhooks.API) http.HandlerFunc) http.HandlerFunc {
	return withService(s, s.webhooks, "this server delivers no webhooks", handler)
}

// bodyCall serves a route that decodes a body of type In and answers status with call's result.
func bodyCall[In, Out any](s *server, o bodyOptions, status int, call func(r *http.Request, in In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in, err := decode[In](s, r, o)
		var out Out
		if err == nil {
			out, err = call(r, in)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeJSON(w, r, status, out)
	}
}

func (s *server) handleWebhookCreate() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			in, err := decode[webhooks.NewWebhook](s, r, bodyOptions{})
			var out *webhooks.Webhook
			if err == nil {
				out, err = wh.Create(r.Context(), in)
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			w.Header().Set("Location", "/v1/webhooks/"+out.ID)
			s.writeJSON(w, r, http.StatusCreated, out)
		}
	})
}

func (s *server) handleWebhookList() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*webhooks.WebhookList, error) { return wh.List(r.Context()) })
	})
}

func (s *server) handleWebhookGet() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, _ *query) (*webhooks.Webhook, error) {
			return wh.Get(r.Context(), r.PathValue("id"))
		})
	})
}

func (s *server) handleWebhookUpdate() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return bodyCall(s, bodyOptions{mergePatch: true}, http.StatusOK, func(r *http.Request, in webhooks.WebhookPatch) (*webhooks.Webhook, error) {
			return wh.Update(r.Context(), r.PathValue("id"), in)
		})
	})
}

func (s *server) handleWebhookRotate() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return bodyCall(s, bodyOptions{optional: true}, http.StatusOK, func(r *http.Request, in webhooks.Rotate) (*webhooks.Webhook, error) {
			return wh.Rotate(r.Context(), r.PathValue("id"), in)
		})
	})
}

func (s *server) handleWebhookDelete() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := wh.Delete(r.Context(), r.PathValue("id")); err != nil {
				s.writeError(w, r, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

func (s *server) handleWebhookDeliveries() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return readRoute(s, func(r *http.Request, q *query) (*webhooks.DeliveryPage, error) {
			return wh.Deliveries(r.Context(), r.PathValue("id"), q.str("cursor"), int(q.int("limit", 1, webhooks.MaxDeliveriesPerPage, 0)))
		})
	})
}

func (s *server) handleWebhookRedeliver() http.HandlerFunc {
	return s.withWebhooks(func(wh webhooks.API) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			d, err := wh.Redeliver(r.Context(), r.PathValue("id"), r.PathValue("did"))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			// No route shows one delivery: Location is the log the queued delivery is in.
			w.Header().Set("Location", "/v1/webhooks/"+d.WebhookID+"/deliveries")
			s.writeJSON(w, r, http.StatusAccepted, d)
		}
	})
}
