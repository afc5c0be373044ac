package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Codes of the failures carryon itself detects in a model call, in Error.Code.
const (
	// CodeTimeout: the call broke one of its time limits (Limits): no answer in time, an answer
	// that stalled, or a call that took too long. Retryable while nothing was yielded.
	CodeTimeout = "model_timeout"
	// CodeOutputLimit: the answer grew past Limits.MaxOutputBytes. Never retryable: the same
	// request would run away again.
	CodeOutputLimit = "model_output_limit"
)

// Error is a failed model call, normalised at the provider boundary so the engine and WithRetry
// can decide what to do without knowing which SDK produced it.
type Error struct {
	// Provider is the Name of the provider that failed.
	Provider string
	// Code is CodeTimeout or CodeOutputLimit when carryon's own limits ended the call; "" for a
	// failure the backend or the connection reported.
	Code string
	// Status is the HTTP status of the answer, or the status the failure stands for when the
	// backend reported it inside a stream; 0 when no HTTP answer was involved.
	Status int
	// Retryable reports whether sending the same request again may succeed.
	Retryable bool
	// Message says what went wrong, for people.
	Message string
	// RetryAfter is the wait the backend asked for; 0 when it asked for none.
	RetryAfter time.Duration
	// Err is the underlying cause, when there is one.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	b.WriteString(e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.Code != "" {
		b.WriteString(": ")
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Unwrap returns the underlying cause, so errors.Is sees through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// IsRetryable reports whether err is worth retrying with the same request. A context
// cancellation never is; an *Error says so itself; otherwise timeouts, refused or reset
// connections and a connection cut mid-answer (io.ErrUnexpectedEOF) are.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Retryable
	}
	return retryableCause(err)
}

// retryableCause classifies an error that did not come with an HTTP status.
func retryableCause(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RetryableStatus reports whether an HTTP status is worth retrying: 408, 409, 429 and every 5xx
// except 501 are; everything else (400, 401, 403, 404, 422, …) is not.
func RetryableStatus(status int) bool {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status == http.StatusTooManyRequests:
		return true
	case status == http.StatusNotImplemented:
		return false
	case status >= 500 && status <= 599:
		return true
	}
	return false
}

// ParseRetryAfter reads the wait a server asked for from the retry-after-ms or Retry-After
// header (seconds or an HTTP date). It returns 0 when there is none or it is in the past.
func ParseRetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// StatusError returns the *Error for an HTTP answer with the given status. header may be nil.
func StatusError(provider string, status int, message string, header http.Header, cause error) *Error {
	if message == "" {
		message = http.StatusText(status)
	}
	return &Error{
		Provider:   provider,
		Status:     status,
		Retryable:  RetryableStatus(status),
		Message:    message,
		RetryAfter: ParseRetryAfter(header),
		Err:        cause,
	}
}

// TransportError normalises a failure that came without an HTTP status (the connection, the
// stream's framing, the context) into an *Error. yielded says whether any chunk already went out
// to the consumer: a connection cut mid-stream is only retryable before that. If ctx is done the
// result is never retryable and wraps the context's error.
func TransportError(ctx context.Context, provider string, err error, yielded bool) *Error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if !errors.Is(err, ctxErr) {
			err = errors.Join(ctxErr, err)
		}
		return &Error{Provider: provider, Message: ctxErr.Error(), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Provider: provider, Message: err.Error(), Err: err}
	}
	retryable := retryableCause(err)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		retryable = !yielded
	}
	return &Error{Provider: provider, Retryable: retryable, Message: err.Error(), Err: err}
}

// AsError returns err as an *Error and true when it is one (or wraps one).
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
