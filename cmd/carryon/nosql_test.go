package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sqlText matches what only SQL says: the command talks to databases through the store seam
// (store.Dumper, store.Loader, the drivers' functions), and its files hold no SQL of their own.
var sqlText = regexp.MustCompile(`\b(SELECT|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM|CREATE (TABLE|INDEX|VIRTUAL)|ALTER TABLE|DROP TABLE|ANALYZE|VACUUM|PRAGMA|pragma_\w+|sqlite_master|information_schema)\b`)

// TestNoSQLInCommand fails when a non-test Go file of cmd/carryon holds SQL text.
func TestNoSQLInCommand(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := sqlText.FindString(line); m != "" {
				t.Errorf("%s:%d holds SQL (%q): it belongs behind the store seam, in a driver or internal/store/sqlq", f, i+1, m)
			}
		}
	}
	if !sqlText.MatchString(`rows, err := tx.Query(ctx, "SELECT count(*) FROM "+name)`) {
		t.Fatal("the pattern misses a SELECT")
	}
}
