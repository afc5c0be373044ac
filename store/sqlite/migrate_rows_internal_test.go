package sqlite

import (
	"testing"

	"github.com/carryon-hub/carryon/internal/store/storetest"
)

// A database written before migration 0018 (messages, revisions and fork chains naming their
// session by id, messages holding their run and request ids in every row) reads back the same
// after it (storetest.CheckOldRows): each message with its ids, a fork whose parent was deleted
// (copies of rows stored at the parent's versions, which its own writes use too) and a fork with
// an old chain included, and appends go on.
func TestMigrateCompactRows(t *testing.T) {
	storetest.CheckOldRows(t, openAfterUpgrade(t, 18, storetest.OldRows))
}
