package postgres

import (
	"context"

	"github.com/carryon-hub/carryon/internal/store"
)

// TableStats lists the tables of the current schema (information_schema) with their row counts
// and pg_total_relation_size: the table, its indexes and its TOAST data.
func (t *tx) TableStats(ctx context.Context) ([]store.TableStat, error) {
	rows, err := t.Conn.Query(ctx, `SELECT table_name, pg_total_relation_size(format('%I.%I', table_schema, table_name)::regclass)
		FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
		ORDER BY table_name COLLATE "C"`)
	if err != nil {
		return nil, t.Wrap(err, "table sizes")
	}
	var out []store.TableStat
	for rows.Next() {
		var s store.TableStat
		if err := rows.Scan(&s.Name, &s.Bytes); err != nil {
			rows.Close()
			return nil, t.Wrap(err, "table sizes")
		}
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, t.Wrap(err, "table sizes")
	}
	for i := range out {
		if out[i].Rows, err = t.CountRows(ctx, out[i].Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}
