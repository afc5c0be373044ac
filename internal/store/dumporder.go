package store

import (
	"fmt"
	"strings"
)

// OrderTables sorts tables so that every table comes after the tables it references (Refs),
// keeping the given order where the foreign keys leave a choice; a cycle is an error.
func OrderTables(tables []Table) ([]Table, error) {
	known := map[string]bool{}
	for _, t := range tables {
		known[t.Name] = true
	}
	done := map[string]bool{}
	var out []Table
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if done[t.Name] {
				continue
			}
			ready := true
			for _, r := range t.Refs {
				if known[r] && !done[r] && r != t.Name {
					ready = false
				}
			}
			if ready {
				done[t.Name], progress = true, true
				out = append(out, t)
				break
			}
		}
		if !progress {
			var left []string
			for _, t := range tables {
				if !done[t.Name] {
					left = append(left, t.Name)
				}
			}
			return nil, fmt.Errorf("the foreign keys of tables %s form a cycle", strings.Join(left, ", "))
		}
	}
	return out, nil
}
