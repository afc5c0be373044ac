package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// setETag tags an answer about one session with the session's version.
func setETag(w http.ResponseWriter, v int64) { w.Header().Set("ETag", wire.ETag(v)) }

// ifMatch reads the If-Match header (wire.IfMatch).
func ifMatch(r *http.Request) (version *int64, star bool, err error) {
	return wire.IfMatch(r.Header.Get("If-Match"))
}

// ifMatchUsed reports whether the request's expected version came from If-Match, so a version
// conflict answers 412 Precondition Failed instead of 409.
func ifMatchUsed(r *http.Request) bool {
	v, _, err := ifMatch(r)
	return err == nil && v != nil && r.Method != http.MethodGet && r.Method != http.MethodHead
}

// noneMatch reports whether If-None-Match names version v (or is *).
func noneMatch(r *http.Request, v int64) bool {
	h := r.Header.Get("If-None-Match")
	if h == "" {
		return false
	}
	for _, t := range strings.Split(h, ",") {
		if strings.TrimSpace(t) == "*" {
			return true
		}
		if n, ok := wire.ParseTag(t); ok && n == v {
			return true
		}
	}
	return false
}

// writeOptions merges the write controls of the headers into those of the body: If-Match gives the
// expected version and Idempotency-Key the request id; when both places name one and they differ,
// the request is refused. existing marks a write to an existing session, which needs a version when
// the server requires one (If-Match: * counts as an explicit "any version").
func (s *server) writeOptions(r *http.Request, body carryon.WriteOptions, existing bool) (carryon.WriteOptions, error) {
	opts := body
	v, anyVersion, err := ifMatch(r)
	if err != nil {
		return opts, err
	}
	if v != nil {
		if opts.ExpectedVersion != nil && *opts.ExpectedVersion != *v {
			return opts, carryon.Errorf(carryon.EINVALID, "If-Match names version %d but expected_version is %d; send one of them", *v, *opts.ExpectedVersion)
		}
		opts.ExpectedVersion = v
	}
	retry, err := retryOptions(r, carryon.RetryOptions{RequestID: opts.RequestID})
	if err != nil {
		return opts, err
	}
	opts.RequestID = retry.RequestID
	if existing && s.requireVersion && opts.ExpectedVersion == nil && !anyVersion {
		return opts, carryon.Errorf(carryon.EVERSIONNEEDED, "this server requires the expected version on writes: send If-Match: \"<version>\" or expected_version")
	}
	return opts, nil
}

// idempotencyKey reads the Idempotency-Key header, a string that may be quoted (IETF draft).
func idempotencyKey(r *http.Request) string {
	k := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	return k
}

// receipt installs a write receipt in the request's context for the service to fill in.
func receipt(r *http.Request) (context.Context, *carryon.WriteReceipt) {
	rec := &carryon.WriteReceipt{}
	return carryon.NewContextWithReceipt(r.Context(), rec), rec
}

// markReplay sets Idempotent-Replayed when the service answered from a stored earlier request.
func markReplay(w http.ResponseWriter, rec *carryon.WriteReceipt) {
	if rec.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}
