package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

const listSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "A directory relative to the workspace; the whole workspace when left out."}
  },
  "additionalProperties": false
}`

type listFiles struct{}

// ListFiles returns the list_files tool: it lists the files under a directory of the workspace,
// recursively, as sorted relative paths with their sizes, at most MaxListEntries of them. Symbolic
// links are listed as links and never followed. carryon's own files (the Reserved directory and
// write_file's temporary files) are never listed.
func ListFiles() tool.Tool { return listFiles{} }

func (listFiles) Name() string { return "list_files" }

func (listFiles) Description() string {
	return fmt.Sprintf("List the files in the session's workspace (or under one of its directories), recursively, "+
		"with their sizes in bytes. Lists at most %d files.", MaxListEntries)
}

func (listFiles) Schema() json.RawMessage { return json.RawMessage(listSchema) }

func (listFiles) Effect() carryon.EffectClass { return carryon.EffectRead }

func (listFiles) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := decode("list_files", c.Args, &args); err != nil {
		return tool.Result{}, err
	}
	name := args.Path
	if name == "" {
		name = "."
	}
	rel, err := local(c.Workspace, name)
	if err != nil {
		return tool.Result{}, err
	}
	root, err := openRoot(c.Workspace, createFor(c))
	if err != nil {
		return tool.Result{}, gone("list_files", name, err)
	}
	defer root.Close()
	if _, err := root.Stat(rel); err != nil {
		return tool.Result{}, describe("list_files", name, err)
	}
	var lines []string
	truncated := false
	err = fs.WalkDir(root.FS(), filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if reserved(p) {
				return fs.SkipDir // carryon's own files
			}
			return nil
		}
		if isTemp(d.Name()) {
			return nil // an unfinished write's temporary file
		}
		if len(lines) == MaxListEntries {
			truncated = true
			return fs.SkipAll
		}
		lines = append(lines, entry(p, d))
		return nil
	})
	if err != nil {
		return tool.Result{}, describe("list_files", name, err)
	}
	slices.Sort(lines)
	out := strings.Join(lines, "\n")
	switch {
	case len(lines) == 0:
		out = "(no files)"
	case truncated:
		out += fmt.Sprintf("\n[listing stopped after %d files; list a subdirectory to see more]", MaxListEntries)
	}
	fp := tool.Fingerprint([]byte(out))
	return tool.Result{Content: out, FingerprintBefore: fp, FingerprintAfter: fp}, nil
}

// entry describes one walked file: its path relative to the workspace and its size, or that it is
// a symbolic link or a special file.
func entry(p string, d fs.DirEntry) string {
	p = path.Clean(p)
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		return p + " (symbolic link)"
	case !d.Type().IsRegular():
		return p + " (special file)"
	}
	info, err := d.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return p + " (removed while listing)"
	} else if err != nil {
		return p + " (unreadable)"
	}
	return fmt.Sprintf("%s (%d bytes)", p, info.Size())
}
