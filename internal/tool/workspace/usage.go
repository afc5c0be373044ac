package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Usage returns how many regular files the workspace dir holds and the sum of their sizes, every
// regular file counted (carryon's own and temporary ones too: they take the space as well). A
// dir that does not exist holds none.
func Usage(dir string) (files, bytes int64, err error) {
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	} else if err != nil {
		return 0, 0, fmt.Errorf("workspace usage: %w", err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("workspace usage: %w", err)
	}
	return files, bytes, nil
}
