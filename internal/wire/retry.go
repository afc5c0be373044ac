package wire

import (
	"net/http"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// RetryAfter is the Retry-After, in seconds, of an answer to err: the error's own hint when it
// has one, else 1 for the codes that a plain retry can cure (a request in flight, a busy session,
// too many requests, an unavailable server or database), else 0 (no header).
func RetryAfter(err error) int {
	e, ok := carryon.AsError(err)
	if !ok {
		return 0
	}
	if e.RetryAfterSeconds > 0 {
		return e.RetryAfterSeconds
	}
	switch e.Code {
	case carryon.EINFLIGHT, carryon.EBUSY, carryon.ETOOMANY, carryon.EUNAVAILABLE:
		return 1
	}
	return 0
}

// SetRetryAfter sets h's Retry-After for err when RetryAfter gives one.
func SetRetryAfter(h http.Header, err error) {
	if s := RetryAfter(err); s > 0 {
		h.Set("Retry-After", strconv.Itoa(s))
	}
}
