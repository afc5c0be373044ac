package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/carryon-hub/carryon"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// normalize turns driver errors into carryon errors at the store boundary: no row is ENOTFOUND, a
// taken unique key is ECONFLICT, a missing referenced row is ENOTFOUND. Context errors and
// *carryon.Error pass through; anything else stays an internal error (wrapped, with its detail).
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
	if errors.Is(err, sql.ErrNoRows) {
		return carryon.Errorf(carryon.ENOTFOUND, "not found")
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return carryon.Errorf(carryon.ECONFLICT, "already exists")
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return carryon.Errorf(carryon.ENOTFOUND, "a referenced row does not exist")
		}
	}
	return err
}
