package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// code matches a backquoted name on the page.
var code = regexp.MustCompile("`([^`]+)`")

// TestArchitectureNamesExist: every path the map names (a name with a slash that ends in .go, or
// names a directory) exists, from the root or from a package of its row of the packages table,
// and every bare file name in a row of that table is a file of one of the packages the row names
// or of the root package (the vocabulary every row may refer to).
func TestArchitectureNamesExist(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for n, line := range strings.Split(string(page), "\n") {
		names := code.FindAllStringSubmatch(line, -1)
		var pkgs []string
		if cells := strings.Split(line, "|"); strings.HasPrefix(line, "|") && len(cells) > 3 {
			for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
				pkgs = append(pkgs, strings.Fields(strings.TrimSuffix(m[1], " (root)"))...)
			}
		}
		for _, m := range names {
			name := m[1]
			switch {
			case strings.ContainsAny(name, " *{}<>$:") || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "."):
				continue // not a path: a route, a glob, code
			case strings.Contains(name, "/") && (strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "/")):
				if _, err := os.Stat(filepath.Join(root, name)); err != nil && !inOneOf(name, pkgs) {
					t.Errorf("docs/ARCHITECTURE.md:%d names %s, which does not exist", n+1, name)
				}
			case strings.HasSuffix(name, ".go") && len(pkgs) > 0:
				if !inOneOf(name, pkgs) {
					t.Errorf("docs/ARCHITECTURE.md:%d names %s, which is in none of %v", n+1, name, pkgs)
				}
			}
		}
	}
}

// inOneOf says whether file (a name, or a glob such as openapi*.go) is in one of the packages.
func inOneOf(file string, pkgs []string) bool {
	for _, p := range append(pkgs, "carryon") {
		p = strings.TrimSuffix(p, ",")
		if p == "carryon" {
			p = "."
		}
		if got, _ := filepath.Glob(filepath.Join(root, p, file)); len(got) > 0 {
			return true
		}
	}
	return false
}
