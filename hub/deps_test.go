package hub_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksOnlySQLite: a program that imports hub links the SQLite driver it opens by default and
// not PostgreSQL's (an embedder passes postgres.Open's store when it wants it).
func TestLinksOnlySQLite(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/carryon-hub/carryon/hub").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := string(out)
	for _, bad := range []string{"github.com/carryon-hub/carryon/store/postgres", "github.com/jackc/pgx"} {
		if strings.Contains(deps, bad) {
			t.Errorf("hub links %s", bad)
		}
	}
	if !strings.Contains(deps, "github.com/carryon-hub/carryon/store/sqlite\n") {
		t.Error("hub does not link the SQLite driver")
	}
}
