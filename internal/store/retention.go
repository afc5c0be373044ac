package store

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Retention is what the system sweeper reads to enforce the retention settings, and the
// operator's size report (carryon stats). None of it is for a user's request.
type Retention interface {
	// SessionsOverLimit returns, across owners, up to limit sessions that are beyond the max most
	// recently active sessions of their owner (by LastActiveAt, then ID), least recently active
	// first. max must be positive.
	SessionsOverLimit(ctx context.Context, max, limit int) ([]SessionRef, error)
	// ExistingSessions returns which of ids name a stored session, whoever owns it: the sweeper
	// checks the workspace directories against it.
	ExistingSessions(ctx context.Context, ids []string) (map[string]bool, error)
	// CountSessions returns how many sessions the owner has.
	CountSessions(ctx context.Context, owner string) (int64, error)
	// TableStats returns every table of the schema (the database's own catalog, so a table a
	// later migration adds is listed too) with its row count and, where the database can tell,
	// the bytes it and its indexes take (-1 where it cannot), ordered by name.
	TableStats(ctx context.Context) ([]TableStat, error)
	// UserStats returns every user (but those being forgotten) with the size of what they own,
	// ordered by name. It reads every row of the database: it is for an operator, not a request.
	UserStats(ctx context.Context) ([]UserStat, error)
	// UserStorage returns every user (but those being forgotten) with the rows and bytes of what
	// they own by kind (SessionStorage's kinds and carryon.StorageLongTerm), the most bytes
	// first, then by name. Like UserStats it reads every row of the database.
	UserStorage(ctx context.Context) ([]UserStorage, error)
	// SessionOwners returns the owner of each of ids that names a stored session.
	SessionOwners(ctx context.Context, ids []string) (map[string]string, error)
}

// UserStorage is what one user's rows take, by kind; Rows and Bytes are the sums of Kinds.
type UserStorage struct {
	UserID string               `json:"user_id"`
	Name   string               `json:"name"`
	Kinds  []carryon.StorageUse `json:"kinds"`
	Rows   int64                `json:"rows"`
	Bytes  int64                `json:"bytes"`
}

// TableStat is the size of one table.
type TableStat struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
	// Bytes is the space the table and its indexes take in the database, -1 when the database
	// cannot tell.
	Bytes int64 `json:"bytes"`
}

// UserStat is the size of what one user owns.
type UserStat struct {
	UserID        string `json:"user_id"`
	Name          string `json:"name"`
	Sessions      int64  `json:"sessions"`
	Messages      int64  `json:"messages"`
	Runs          int64  `json:"runs"`
	Actions       int64  `json:"actions"`
	Events        int64  `json:"events"`
	LongTermItems int64  `json:"long_term_items"`
	RequestIDs    int64  `json:"request_ids"`
	// Bytes is the length in bytes of the user's stored text: message contents, tool calls and
	// metadata, working memory revisions, tool arguments and results, run events, long-term
	// items (not the space of rows and indexes, which the database does not split by user).
	Bytes int64 `json:"bytes"`
}

// SortUserStorage orders users as UserStorage answers them: the most bytes first, then by name.
func SortUserStorage(users []UserStorage) {
	slices.SortStableFunc(users, func(a, b UserStorage) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Name, b.Name))
	})
}
