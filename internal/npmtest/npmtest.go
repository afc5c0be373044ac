// Package npmtest finds, for tests, the Node.js tools pinned in .ci/npm (installed there by
// `npm ci`) and the system programs the tests drive. A test without one is skipped with the
// reason, unless CARRYON_TEST_REQUIRE_NPM=1 (as in CI), where it fails instead.
package npmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Missing skips t with why, or fails it when CARRYON_TEST_REQUIRE_NPM=1.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CARRYON_TEST_REQUIRE_NPM") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// File returns the path of rel under .ci/npm/node_modules (such as "axe-core/axe.min.js"), or
// calls Missing when it is not installed.
func File(t testing.TB, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, ".ci", "npm")); err == nil {
				break // the main module's root, not a nested module's
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no repository root (go.mod and .ci/npm) above the test's directory")
		}
		dir = parent
	}
	path := filepath.Join(dir, ".ci", "npm", "node_modules", filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		Missing(t, rel+" is not installed: run `npm ci` in .ci/npm ("+err.Error()+")")
	}
	return path
}

// Bin returns the path of a command a pinned package installs (.bin/name), after checking that
// node is on PATH; Missing otherwise.
func Bin(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node is not on PATH")
	}
	return File(t, ".bin/"+name)
}
