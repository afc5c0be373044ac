package carryon

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes. Each is the `code` of a problem+json answer; httpapi maps each to one HTTP status.
const (
	EINVALID        = "invalid_request"        // 400: the input is malformed or breaks a rule
	EUNAUTHORIZED   = "unauthorized"           // 401: no credentials or bad ones
	EFORBIDDEN      = "forbidden"              // 403: authenticated but not allowed (admin routes)
	ENOTFOUND       = "not_found"              // 404: missing, or owned by someone else
	EVERSION        = "version_conflict"       // 409 (412 for If-Match): the expected version is stale
	EINFLIGHT       = "request_in_flight"      // 409: the same request id is still being processed
	EKEYREUSED      = "idempotency_key_reused" // 422: the same request id with another input
	EBUSY           = "session_busy"           // 409: the session already has an active run
	ECLOSED         = "session_closed"         // 409: the session is closed; restore it first
	EEXPIRED        = "session_expired"        // 410: the session expired; restore it first
	ECONFLICT       = "conflict"               // 409: the write conflicts with the current state
	EFENCED         = "run_fenced"             // 409: a runner wrote for a run another runner took over
	EVERSIONNEEDED  = "version_required"       // 428: the server requires an expected version
	ETOOLARGE       = "payload_too_large"      // 413: the request body is over the limit
	ETIMEOUT        = "request_timeout"        // 408: the request body did not arrive in time
	ETOOMANY        = "too_many_requests"      // 429: the caller has too many requests or streams open, or is over its request rate
	EQUOTA          = "insufficient_storage"   // 507: the caller's stored bytes are at its quota; reads and deletes still work
	EUNSUPPORTED    = "unsupported_media_type" // 415: the body is not JSON
	EINTERNAL       = "internal"               // 500: a bug or an unexpected failure
	EUNAVAILABLE    = "unavailable"            // 503: the server is shutting down or not ready
	ENOTIMPLEMENTED = "not_implemented"        // 501: the operation is not available here
)

// Error is the one error type of the application. Code is machine-readable, Message is for people.
// The optional fields carry facts a client needs to recover (the current version after a conflict,
// the active run of a busy session).
type Error struct {
	Code    string
	Message string
	// CurrentVersion is set on EVERSION: the version the session is at now.
	CurrentVersion int64
	// ActiveRunID is set on EBUSY: the run that holds the session.
	ActiveRunID string
	// RetryAfterSeconds is set on EINFLIGHT and EBUSY: a hint for when to retry.
	RetryAfterSeconds int
}

// Error implements the error interface: the message and then the code, "session not found
// (not_found)", so that an error wrapped in others reads as a sentence wherever it stands.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return strings.TrimSuffix(e.Message, ".") + " (" + e.Code + ")"
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, "" for nil and EINTERNAL for anything else.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of an application error, or a generic one for anything else so
// that internal details never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// AsError returns err as an *Error and true when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// VersionConflict returns the EVERSION error for a stale expected version.
func VersionConflict(expected, current int64) *Error {
	return &Error{
		Code:           EVERSION,
		Message:        fmt.Sprintf("expected version %d but the session is at version %d; re-read it and retry", expected, current),
		CurrentVersion: current,
	}
}
