package sqlq

import "strings"

// DumpTable is what a driver's dump (store.Dumper) knows of a table to read it: the expression
// of each column, the tables joined along, the foreign key to the table itself and the key.
type DumpTable struct {
	Name string
	// Exprs reads each column by name (t."name", or a column of a joined table).
	Exprs map[string]string
	// Joins are joined along (LEFT JOIN … ON …), for columns kept in another table.
	Joins []string
	// SelfFrom and SelfTo are the columns of a foreign key to the table itself (sessions.parent_id
	// → sessions.id), empty without one: rows are then read parents first.
	SelfFrom, SelfTo string
	// Key are the primary key's columns, in key order.
	Key []string
}

// Select is the query that reads cols of the table (names of Exprs; false when one is not) in
// primary-key order; a table that references itself is read parents first, by depth in its tree
// (a fork after the session it forks), then by key.
func (t *DumpTable) Select(cols []string) (string, bool) {
	exprs := make([]string, len(cols))
	for i, c := range cols {
		e, ok := t.Exprs[c]
		if !ok {
			return "", false
		}
		exprs[i] = e
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + QuoteIdent(t.Name) + " t"
	for _, j := range t.Joins {
		q += " " + j
	}
	var order []string
	if t.SelfFrom != "" {
		from, to, tbl := QuoteIdent(t.SelfFrom), QuoteIdent(t.SelfTo), QuoteIdent(t.Name)
		q = "WITH RECURSIVE depth(k, d) AS (SELECT " + to + ", 0 FROM " + tbl + " WHERE " + from + " IS NULL" +
			" UNION ALL SELECT c." + to + ", depth.d + 1 FROM " + tbl + " c JOIN depth ON c." + from + " = depth.k) " +
			q + " LEFT JOIN depth ON depth.k = t." + to
		order = append(order, "COALESCE(depth.d, 9223372036854775807)")
	}
	for _, k := range t.Key {
		order = append(order, "t."+QuoteIdent(k))
	}
	if len(order) > 0 {
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	return q, true
}

// QuoteIdent quotes an identifier as both drivers' SQL does ("name", a quote doubled).
func QuoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
