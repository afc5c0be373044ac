//go:build !linux

package sqlite

import "os"

// fdatasync flushes f to disk (fsync: the systems other than Linux that carryon builds on have no
// separate fdatasync in package syscall).
func fdatasync(f *os.File) error { return f.Sync() }
