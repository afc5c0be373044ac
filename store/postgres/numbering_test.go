package postgres_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMigrationsShareNumbers: from 0020 on both drivers have the same migrations, by number and
// name (each in its own SQL).
func TestMigrationsShareNumbers(t *testing.T) {
	t.Parallel()
	list := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			num, _, ok := strings.Cut(e.Name(), "_")
			n, err := strconv.Atoi(num)
			if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
				t.Fatalf("%s/%s is not NNNN_name.sql", dir, e.Name())
			}
			if n >= 20 {
				out = append(out, e.Name())
			}
		}
		return out
	}
	pg, lite := list("migrations"), list("../sqlite/migrations")
	if len(pg) == 0 || strings.Join(pg, " ") != strings.Join(lite, " ") {
		t.Fatalf("migrations from 0020 on differ:\npostgres %v\nsqlite   %v", pg, lite)
	}
}
