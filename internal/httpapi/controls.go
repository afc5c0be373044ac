package httpapi

import (
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
)

// checkControls refuses the write controls a route does not take, instead of ignoring them: an
// If-Match where nothing has a version to match, an Idempotency-Key where there is nothing to
// replay. A client that sends one believes it is protected; a 400 tells it that it is not.
func checkControls(r *http.Request, rt *Route) error {
	if r.Header.Get("If-Match") != "" && !rt.Versioned {
		return carryon.Errorf(carryon.EINVALID, "%s %s takes no If-Match: %s", rt.Method, rt.Pattern, noVersion(rt))
	}
	if r.Header.Get("Idempotency-Key") != "" && !rt.Write {
		return carryon.Errorf(carryon.EINVALID, "%s %s takes no Idempotency-Key: %s", rt.Method, rt.Pattern, noReplay(rt))
	}
	return nil
}

// noVersion says why a route has no version for If-Match to name.
func noVersion(rt *Route) string {
	switch {
	case rt.Method == http.MethodGet || rt.Method == http.MethodHead || rt.Pattern == "/v1/memories/search":
		return "it is a read, and If-Match guards writes to a session (If-None-Match makes GET /v1/sessions/{id} conditional)"
	case rt.Pattern == "/v1/sessions":
		return "a new session has no version yet"
	case strings.HasPrefix(rt.Pattern, "/v1/webhooks"):
		return "a webhook has no version (If-Match names a session version)"
	case strings.HasPrefix(rt.Pattern, "/v1/runs/"):
		return "a run has no version (If-Match names a session version); send Idempotency-Key to make a retry safe"
	}
	return "users and keys have no version (If-Match names a session version)"
}

// noReplay says why a route keeps no answer for an Idempotency-Key to replay.
func noReplay(rt *Route) string {
	if rt.Method == http.MethodGet || rt.Method == http.MethodHead || rt.Pattern == "/v1/memories/search" {
		return "it is a read, and a read is safe to repeat as it is"
	}
	if rt.Method == http.MethodDelete && rt.Pattern == "/v1/users/{id}" {
		return "forgetting a user is many transactions, not one, and forgets the user's request ids with the rest; a repeat continues a forget that was cut off, or finds the user gone (404)"
	}
	if strings.HasPrefix(rt.Pattern, "/v1/webhooks") {
		return "webhooks keep no answers to replay: the answer of a create or a rotation holds a signing secret that is shown once; a patch or a redeliver may be repeated as it is, and a repeated delete answers 404"
	}
	return "its answer holds a secret that is shown once and never stored, so it cannot be replayed (a retried user creation finds its name taken: 409)"
}

// retryOptions merges the Idempotency-Key header into the request id of the body, for a write
// whose target has no version; both given and different is refused.
func retryOptions(r *http.Request, body carryon.RetryOptions) (carryon.RetryOptions, error) {
	if key := idempotencyKey(r); key != "" {
		if body.RequestID != "" && body.RequestID != key {
			return body, carryon.Errorf(carryon.EINVALID, "Idempotency-Key %q and request_id %q differ; send one of them", key, body.RequestID)
		}
		body.RequestID = key
	}
	return body, nil
}
