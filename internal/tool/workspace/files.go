package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one regular file of a workspace: its slash-separated path relative to the workspace,
// its permission bits and its content. An exported session carries its workspace as Files.
type File struct {
	Path string
	Mode fs.FileMode
	Data []byte
}

// ReadAll returns the regular files of the workspace dir, by path, leaving out what Copy leaves
// out (carryon's own files, temporary files, symbolic links, special files). A dir that does not
// exist has no files. It stops with an error once the files' bytes pass limit.
func ReadAll(dir string, limit int64) ([]File, error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read workspace: %w", err)
	}
	defer root.Close()
	var out []File
	var total int64
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
			return nil
		case d.IsDir() && reserved(p):
			return fs.SkipDir
		case d.IsDir() || !d.Type().IsRegular() || isTemp(path.Base(p)):
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > limit {
			return fmt.Errorf("the workspace's files are over %d bytes", limit)
		}
		b, err := root.ReadFile(filepath.FromSlash(p))
		if err != nil {
			return err
		}
		out = append(out, File{Path: p, Mode: info.Mode().Perm(), Data: b})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read workspace: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// ValidPath reports whether p can name a file of a workspace: relative, slash-separated, clean,
// inside it and outside carryon's own directory.
func ValidPath(p string) bool {
	return p != "" && fs.ValidPath(p) && p != "." && !strings.Contains(p, `\`) && !reserved(p) && !isTemp(path.Base(p))
}

// WriteAll makes the workspace dir (which must not exist) holding files, each synced. A path
// that is not ValidPath is an error.
func WriteAll(dir string, files []File) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("write workspace: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("write workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write workspace: %w", err)
	}
	defer root.Close()
	for _, f := range files {
		if !ValidPath(f.Path) {
			return fmt.Errorf("write workspace: %q is no workspace path", f.Path)
		}
		rel := filepath.FromSlash(f.Path)
		if d := filepath.Dir(rel); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("write workspace: %w", err)
			}
		}
		if err := writeNew(root, rel, f); err != nil {
			return fmt.Errorf("write workspace: %w", err)
		}
	}
	return syncDir(root, ".")
}

func writeNew(root *os.Root, rel string, f File) error {
	out, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.Mode.Perm()|0o600)
	if err != nil {
		return err
	}
	_, err = out.Write(f.Data)
	if err == nil {
		err = out.Chmod(f.Mode.Perm() | 0o600)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
