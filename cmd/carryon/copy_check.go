package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// maxReportedRows bounds the bad rows a refused copy lists.
const maxReportedRows = 20

// badRow is a source row PostgreSQL cannot take as it is.
type badRow struct {
	table, key, column, problem string
}

// checkRows reads every row that is to be copied and converts each value as the copy would,
// before anything is written: a value PostgreSQL cannot store (text with a NUL character or
// invalid UTF-8, say, which SQLite keeps) would otherwise abort the copy halfway through. It
// returns an error that lists the bad rows (table, key and column) when there is one.
func checkRows(ctx context.Context, stx *sql.Tx, tables []*copyTable) error {
	var bad []badRow
	total := 0
	for _, t := range tables {
		n, rows, err := checkTable(ctx, stx, t, maxReportedRows-len(bad))
		if err != nil {
			return err
		}
		total += n
		bad = append(bad, rows...)
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

// checkTable converts every value of t's rows and returns how many fail and the first few.
func checkTable(ctx context.Context, stx *sql.Tx, t *copyTable, report int) (int, []badRow, error) {
	rows, err := stx.QueryContext(ctx, t.selectSQL())
	if err != nil {
		return 0, nil, fmt.Errorf("sqlite: read %s: %w", t.name, err)
	}
	defer rows.Close()
	raw := make([]any, len(t.columns))
	dest := make([]any, len(t.columns))
	for i := range raw {
		dest[i] = &raw[i]
	}
	var bad []badRow
	n := 0
	var rowNum int64
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return 0, nil, fmt.Errorf("sqlite: read %s: %w", t.name, err)
		}
		rowNum++
		for i, c := range t.columns {
			if _, err := c.convert(raw[i]); err != nil {
				n++
				if len(bad) < report {
					bad = append(bad, badRow{table: t.name, key: t.rowKey(raw, rowNum), column: c.name, problem: err.Error()})
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("sqlite: read %s: %w", t.name, err)
	}
	return n, bad, nil
}

// rowKey names a row by its primary key (session_id=sess_…, seq=3), or by its place in the
// read when the key is not among the copied columns.
func (t *copyTable) rowKey(raw []any, rowNum int64) string {
	var parts []string
	for _, k := range t.pk {
		found := false
		for i, c := range t.columns {
			if c.name == k {
				parts = append(parts, fmt.Sprintf("%s=%s", k, keyValue(raw[i])))
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
