package aisdk

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// WriteError answers err as an RFC 9457 problem+json document with the status the native API
// gives its code; an internal error says no more than that. The AI SDK reads the body as the
// error's text, so the detail is a sentence a user can act on.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := carryon.ErrorCode(err)
	status := wire.StatusOf(code)
	msg := carryon.ErrorMessage(err)
	if status == http.StatusInternalServerError {
		code, msg = carryon.EINTERNAL, "internal error"
	}
	wire.SetRetryAfter(w.Header(), err)
	writeProblem(w, r, status, code, msg)
}

// writeProblem writes one problem+json document.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	p := wire.Problem{
		Type: wire.ProblemTypeBase + code, Title: http.StatusText(status), Status: status,
		Detail: detail, Code: code, Instance: r.URL.Path,
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// invalid is an EINVALID error.
func invalid(format string, args ...any) error {
	return carryon.Errorf(carryon.EINVALID, format, args...)
}

// chatNotFound is the 404 of a chat id that names no session of the caller's (a missing one and
// another user's alike).
func chatNotFound(id string) error {
	return carryon.Errorf(carryon.ENOTFOUND, "chat %q not found", id)
}

// isStreamPath reports whether path is a resume path, /v1/ai-sdk/chat/{id}/stream.
func isStreamPath(path string) bool {
	rest, ok := strings.CutPrefix(path, Prefix+"/chat/")
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(rest, "/stream")
	return ok && id != "" && !strings.Contains(id, "/")
}
