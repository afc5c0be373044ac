package store

import (
	"context"
	"fmt"
	"strings"
)

// Table is one table of a dump: its name, its columns in the order a row of Rows carries them,
// its primary key and the tables it references.
type Table struct {
	// Name is the table's name, the same in every driver.
	Name string
	// Columns are the columns a row carries, in order.
	Columns []Column
	// Key are the columns of the primary key, in key order (they name a row in reports).
	Key []string
	// Refs are the other tables this one references; a dump lists them before it.
	Refs []string
}

// Column is one column of a dumped table.
type Column struct {
	// Name is the column's name.
	Name string
	// Type is the driver's own type of the column (INTEGER, timestamp with time zone …), for
	// reports.
	Type string
	// Incidental marks a column that is the source driver's bookkeeping rather than data of its
	// own: a rowid that only links a full-text index, or text the source keeps in such an index.
	// A destination without the column loses nothing and does not warn about it.
	Incidental bool
}

// Dumper is a store whose whole database can be read table by table, for a copy into another
// store (carryon copy). Values come as nil, int64, float64, bool, string, []byte or time.Time,
// as the driver keeps them; the Loader converts them to its own column types.
type Dumper interface {
	// Dump calls fn with one consistent read snapshot of the database; the snapshot ends when fn
	// returns. Writers may go on meanwhile; what they commit after Dump began is not in it.
	Dump(ctx context.Context, fn func(Snapshot) error) error
}

// Snapshot is one consistent read of a whole database.
type Snapshot interface {
	// Tables returns the tables with data, referenced tables first (the creation order where
	// foreign keys leave a choice). Derived tables (full-text indexes) are not among them.
	Tables() []Table
	// Skipped names the tables the dump leaves out, each with why ("memories_fts (a full-text
	// index: …)").
	Skipped() []string
	// Count returns how many rows table holds.
	Count(ctx context.Context, table string) (int64, error)
	// Rows reads the rows of t (a table of Tables, or one with fewer of its columns, as a Loader's
	// Plan returns it) and calls fn with batches of at most batch rows, each row's values in t's
	// column order: in primary-key order, and in a table that references itself parents before
	// children (a fork after the session it forks). fn must not keep the batch.
	Rows(ctx context.Context, t Table, batch int, fn func(rows [][]any) error) error
}

// Loader is a store that can take the tables of a Snapshot into an empty database.
type Loader interface {
	// Load calls fn with one write transaction and commits it when fn returns nil; otherwise it
	// rolls everything back and returns fn's error.
	Load(ctx context.Context, fn func(LoadTx) error) error
	// Analyze refreshes the planner's statistics of a table after a load (a no-op where the
	// driver has nothing to refresh).
	Analyze(ctx context.Context, table string) error
}

// LoadTx is a Loader's transaction.
type LoadTx interface {
	// NonEmpty returns the first table (by name) that holds a row, "" when the database is empty
	// but for its schema bookkeeping.
	NonEmpty(ctx context.Context) (string, error)
	// Plan matches the source's tables with the destination's: each table as it is to be loaded
	// (the columns both have, without those the destination computes itself), in the source's
	// order, and a warning for each table whose source columns the destination lacks (Incidental
	// ones aside). A source table the destination lacks is an error.
	Plan(src []Table) ([]Table, []string, error)
	// Check converts a row of t as Insert would, without writing it, and calls bad for every
	// value the destination cannot store (text with a NUL character in PostgreSQL, say).
	Check(t Table, row []any, bad func(column string, err error))
	// Insert stores rows of t (a table Plan returned) and returns how many the database took;
	// it may overwrite the rows' values (a batch of Snapshot.Rows is not kept).
	Insert(ctx context.Context, t Table, rows [][]any) (int64, error)
	// Finish makes what the destination derives from the loaded rows (the session search index)
	// and returns how many session search documents it holds.
	Finish(ctx context.Context) (int64, error)
	// Count returns how many rows table holds in this transaction.
	Count(ctx context.Context, table string) (int64, error)
}

// ColumnPlace says what a destination does with a source column: Keep it, Skip it (the
// destination makes it itself: a generated column, text it keeps in a full-text index), or
// Missing, when it has no such column.
type ColumnPlace int

// The places of a source column in the destination.
const (
	Keep ColumnPlace = iota
	Skip
	Missing
)

// PlanTables is the work of a LoadTx's Plan that is the same for every driver: where(table,
// column) says what the destination does with a column (its ok false when it has no such table),
// db names the destination in messages ("PostgreSQL").
func PlanTables(src []Table, db string, where func(table, column string) (ColumnPlace, bool)) ([]Table, []string, error) {
	var out []Table
	var warnings []string
	for _, t := range src {
		if _, ok := where(t.Name, ""); !ok {
			return nil, nil, fmt.Errorf("table %s is in the source database but not in %s: are both at the same schema version?", t.Name, db)
		}
		lt := t
		lt.Columns = nil
		var dropped []string
		for _, c := range t.Columns {
			switch place, _ := where(t.Name, c.Name); {
			case place == Keep:
				lt.Columns = append(lt.Columns, c)
			case place == Missing && !c.Incidental:
				dropped = append(dropped, c.Name)
			}
		}
		if len(dropped) > 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %s has no column %s; its values are not copied", t.Name, db, strings.Join(dropped, ", ")))
		}
		out = append(out, lt)
	}
	return out, warnings, nil
}
