package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// TestFilesArePrivate opens a new database with umask 0 in a directory of mode 0777: the database
// file and its WAL and shared-memory files are 0600 all the same.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "carryon.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Write(context.Background(), func(context.Context, store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want 0600", filepath.Base(p), info.Mode().Perm(), err)
		}
	}
}
