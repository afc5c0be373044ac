package sessions

import (
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Cursors are opaque to clients. The message and revision listings keep the cursors they always
// had (the seq or memory version the next page continues from, in decimal) because clients were
// told they equal the older after_seq and before parameters, which stay as aliases.

// position reads where a seq-ordered page starts: a cursor, or the alias parameter named alias
// with value n. Both given and different is EINVALID, and so is a malformed cursor.
func position(cursor, alias string, n int64) (int64, error) {
	if n < 0 {
		return 0, carryon.Errorf(carryon.EINVALID, "%s must not be negative", alias)
	}
	if cursor == "" {
		return n, nil
	}
	c, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || c < 1 || strconv.FormatInt(c, 10) != cursor {
		return 0, badCursor(cursor)
	}
	if n != 0 && n != c {
		return 0, carryon.Errorf(carryon.EINVALID, "cursor %q and %s %d name different pages; send one of them", cursor, alias, n)
	}
	return c, nil
}

func badCursor(c string) error {
	if len(c) > 80 {
		c = c[:80] + "…"
	}
	return carryon.Errorf(carryon.EINVALID, "cursor %q is not a next_cursor this listing returned", strings.ToValidUTF8(c, "?"))
}
