package sqlite

import (
	"errors"

	"github.com/carryon-hub/carryon"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// codes says what SQLite's errors mean at the store boundary (sqlq.Dialect.Normalize does the
// rest): a taken unique key is ECONFLICT, a missing referenced row is ENOTFOUND.
func codes(err error) error {
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
