package postgres

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the driver handles.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeBadCharacter         = "22021" // character_not_in_repertoire: a NUL byte or invalid UTF-8
)

// normalize turns driver errors into carryon errors at the store boundary: no row is ENOTFOUND, a
// taken unique key is ECONFLICT, a missing referenced row (or a row still referenced) is
// ENOTFOUND, and text PostgreSQL cannot store (a NUL byte, invalid UTF-8) is EINVALID rather than
// a server fault. Context errors and *carryon.Error pass through; anything else stays an internal
// error (wrapped, with its detail, so that Write can still see a deadlock through it).
func normalize(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := carryon.AsError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return carryon.Errorf(carryon.ENOTFOUND, "not found")
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case codeUniqueViolation:
			return carryon.Errorf(carryon.ECONFLICT, "already exists")
		case codeForeignKeyViolation:
			return carryon.Errorf(carryon.ENOTFOUND, "a referenced row does not exist")
		case codeBadCharacter:
			return carryon.Errorf(carryon.EINVALID, "text must be valid UTF-8 without NUL characters")
		}
	}
	return err
}

// retryable reports whether err is Postgres aborting a transaction that may succeed when run
// again: a deadlock or a serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == codeDeadlockDetected || pe.Code == codeSerializationFailure
}
