package store

import (
	"errors"

	"github.com/carryon-hub/carryon"
)

// ErrUnavailable is matched (errors.Is) by every error a driver returns because the database
// could not be reached or could not take writes: a refused or lost connection, a server shutting
// down, a primary demoted to a standby, a database that stopped answering. Such an error is also a
// carryon EUNAVAILABLE error, which the HTTP doors answer 503 with Retry-After. A write that
// failed so may or may not have committed; a client retries it with the same request id and the
// idempotency record makes it apply once.
var ErrUnavailable = errors.New("the database is unavailable")

// UnavailableRetryAfter is the Retry-After, in seconds, of an error made by Unavailable.
const UnavailableRetryAfter = 1

// unavailableError is the error Unavailable returns: a carryon EUNAVAILABLE error for clients,
// ErrUnavailable for code, and the driver's cause for the logs.
type unavailableError struct {
	app   *carryon.Error
	cause error
}

// Unavailable returns the EUNAVAILABLE error for a database fault; cause is the driver's error,
// kept for logs (Error) but not matched by errors.Is and never shown to a client.
func Unavailable(cause error) error {
	return &unavailableError{
		app: &carryon.Error{
			Code:              carryon.EUNAVAILABLE,
			Message:           "the database is unavailable; retry with the same request id (a write that failed so may or may not have been applied, and the retry applies it once)",
			RetryAfterSeconds: UnavailableRetryAfter,
		},
		cause: cause,
	}
}

func (e *unavailableError) Error() string {
	if e.cause == nil {
		return e.app.Error()
	}
	return e.app.Error() + ": " + e.cause.Error()
}

// Unwrap gives errors.As the carryon error and errors.Is the sentinel.
func (e *unavailableError) Unwrap() []error { return []error{e.app, ErrUnavailable} }
