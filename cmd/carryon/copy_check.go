package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon/internal/store"
)

// maxReportedRows bounds the bad rows a refused copy lists.
const maxReportedRows = 20

// badRow is a source row PostgreSQL cannot take as it is.
type badRow struct {
	table, key, column, problem string
}

// checkRows reads every row that is to be copied and converts each value as the copy would,
// before anything is written: a value the destination cannot store (text with a NUL character or
// invalid UTF-8 in PostgreSQL, say, which SQLite keeps) would otherwise abort the copy halfway
// through. It returns an error that lists the bad rows (table, key and column) when there is one.
func checkRows(ctx context.Context, snap store.Snapshot, load store.LoadTx, tables []store.Table) error {
	var bad []badRow
	total := 0
	for _, t := range tables {
		var rowNum int64
		err := snap.Rows(ctx, t, copyBatch, func(rows [][]any) error {
			for _, row := range rows {
				rowNum++
				load.Check(t, row, func(column string, err error) {
					total++
					if len(bad) < maxReportedRows {
						bad = append(bad, badRow{table: t.Name, key: rowKey(t, row, rowNum), column: column, problem: err.Error()})
					}
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if total == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d value(s) in the SQLite database cannot be stored in PostgreSQL; nothing was copied.\n", total)
	for _, r := range bad {
		fmt.Fprintf(&b, "  %s %s, column %s: %s\n", r.table, r.key, r.column, r.problem)
	}
	if total > len(bad) {
		fmt.Fprintf(&b, "  … and %d more\n", total-len(bad))
	}
	b.WriteString("Correct or delete these rows in the SQLite database (with the server stopped), then copy again.")
	return fmt.Errorf("%s", b.String())
}

// rowKey names a row by its primary key (session_id=sess_…, seq=3), or by its place in the
// read when the key is not among the copied columns.
func rowKey(t store.Table, row []any, rowNum int64) string {
	var parts []string
	for _, k := range t.Key {
		found := false
		for i, c := range t.Columns {
			if c.Name == k {
				parts = append(parts, fmt.Sprintf("%s=%s", k, keyValue(row[i])))
				found = true
			}
		}
		if !found {
			parts = nil
			break
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("row %d", rowNum)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// keyValue writes a key column's value for a report: text quoted, bytes as text, NUL shown.
func keyValue(v any) string {
	switch x := v.(type) {
	case []byte:
		return fmt.Sprintf("%q", x)
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}
