package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Copy copies the files of the workspace src into the workspace dst, as they are now: regular
// files with their permissions, in directories made 0700. It leaves out carryon's own files (the
// Reserved directory, temporary files), symbolic links and special files, and never reads or
// writes outside either workspace. dst is created when missing; a file that exists there already
// is not overwritten (an error). A src that does not exist copies nothing
// (and makes no dst). Forking a session uses
// it, so the fork starts with its parent's files.
func Copy(src, dst string) error {
	from, err := os.OpenRoot(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("copy workspace: %w", err)
	}
	defer from.Close()
	to, err := openRoot(dst, true)
	if err != nil {
		return fmt.Errorf("copy workspace: %w", err)
	}
	defer to.Close()
	err = fs.WalkDir(from.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case d.IsDir() && reserved(p):
			return fs.SkipDir
		case d.IsDir():
			if err := to.Mkdir(filepath.FromSlash(p), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			return nil
		case !d.Type().IsRegular() || isTemp(path.Base(p)):
			return nil
		}
		return copyFile(from, to, filepath.FromSlash(p))
	})
	if err != nil {
		return fmt.Errorf("copy workspace: %w", err)
	}
	return syncDir(to, ".")
}

// copyFile copies the regular file rel of from to a new file rel of to, with its permissions,
// and syncs it.
func copyFile(from, to *os.Root, rel string) (err error) {
	in, err := from.Open(rel)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil // replaced by something else since the walk saw it
	}
	out, err := to.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(info.Mode().Perm()) // the umask may have narrowed it
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
