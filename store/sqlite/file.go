package sqlite

import (
	"os"
	"strings"
)

// createPrivate creates the database file of dsn, empty and with mode 0600, when it does not exist
// yet. SQLite itself creates it 0644 narrowed by the umask, readable by every user of the machine
// under umask 0; it gives the -wal and -shm files the mode of the database file. An existing file
// keeps its mode (its owner may have chosen it), and dsns that are not plain paths (":memory:",
// "file:" URIs) are left to SQLite. A failure here is left for SQLite's own open to report.
func createPrivate(dsn string) {
	path, _, _ := strings.Cut(dsn, "?")
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	}
}
