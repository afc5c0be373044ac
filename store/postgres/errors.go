package postgres

import (
	"errors"

	"github.com/carryon-hub/carryon"
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

// codes says what PostgreSQL's errors mean at the store boundary (sqlq.Dialect.Normalize does
// the rest): a taken unique key is ECONFLICT, a missing referenced row (or a row still
// referenced) is ENOTFOUND, and text PostgreSQL cannot store (a NUL byte, invalid UTF-8) is
// EINVALID rather than a server fault. Anything else stays an internal error (wrapped, with its
// detail, so that Write can still see a deadlock through it).
func codes(err error) error {
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
