package sqlite

import (
	"fmt"
	"os"
	"syscall"
)

// fdatasync flushes f's data (and the size it needs to be read back), as SQLite does on Linux.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err == nil {
			return nil
		} else if err != syscall.EINTR {
			return fmt.Errorf("fdatasync: %w", err)
		}
	}
}
