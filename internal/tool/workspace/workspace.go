// Package workspace provides the per-session file tools read_file, write_file and list_files,
// confined to the session's workspace directory (tool.Call.Workspace).
//
// Confinement is enforced twice. A path is first checked for a clear answer to the model: it must
// be relative, must stay inside the workspace after cleaning, and the existing part of it must not
// resolve (through symbolic links) to a place outside the workspace. Every file operation then goes
// through an os.Root opened on the workspace, which refuses at the system-call level any name or
// symbolic link that leads out of it, so a link swapped in between the check and the use cannot
// escape either.
//
// Writes are fenced: Claim records in the workspace which run attempt may change it, and
// write_file checks its call's tool.Fence against that record under a file lock right before its
// rename, so a runner that was paused past its lease cannot overwrite what the attempt that took
// over wrote. carryon's own files live in the Reserved directory (and beside a file while it is
// written); the tools neither show nor touch them.
//
// The package must not know about sessions, runs or the journal: it touches files only.
package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Limits of the file tools.
const (
	// MaxWriteBytes is the largest content write_file accepts.
	MaxWriteBytes = 1 << 20
	// MaxReadBytes is how much of a file read_file returns; the rest is cut with a note.
	MaxReadBytes = 256 << 10
	// MaxListEntries is how many files list_files lists.
	MaxListEntries = 1000
)

// Absent is the fingerprint of a file that does not exist.
const Absent = "absent"

// Tools returns read_file, write_file and list_files.
func Tools() []tool.Tool { return []tool.Tool{ReadFile(), WriteFile(), ListFiles()} }

// invalid returns the invalid_request error the model sees when a path or argument is refused.
func invalid(format string, args ...any) error {
	return carryon.Errorf(carryon.EINVALID, format, args...)
}

// decode reads the tool's arguments into v.
func decode(name string, raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("%s: the arguments are not valid JSON: %v", name, err)
	}
	return nil
}

// local checks name as given by the model and returns it cleaned and relative to the workspace
// ("." for the workspace itself). It refuses absolute paths, paths that climb out with "..", and
// paths whose existing part resolves through a symbolic link to outside the workspace.
func local(workspace, name string) (string, error) {
	if workspace == "" {
		return "", carryon.Errorf(carryon.EUNAVAILABLE, "this session has no workspace")
	}
	if strings.ContainsRune(name, 0) {
		return "", invalid("path %q contains a NUL byte", name)
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return "", invalid("path %s is absolute; give a path relative to the workspace", name)
	}
	rel := filepath.Clean(name)
	if !filepath.IsLocal(rel) {
		return "", invalid("path %s escapes the workspace", name)
	}
	if err := checkReserved(rel, name); err != nil {
		return "", err
	}
	if err := checkLinks(workspace, rel, name); err != nil {
		return "", err
	}
	return rel, nil
}

// checkLinks resolves the longest existing prefix of rel with filepath.EvalSymlinks and refuses
// it unless it stays inside the workspace's own resolved path.
func checkLinks(workspace, rel, name string) error {
	base, err := filepath.EvalSymlinks(workspace)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing exists yet, so no link can lead out
	} else if err != nil {
		return err
	}
	p := filepath.Join(workspace, rel)
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		parent := filepath.Dir(p)
		if parent == p || len(parent) < len(filepath.Clean(workspace)) {
			return nil
		}
		p = parent
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return invalid("path %s goes through a broken symbolic link", name)
	}
	r, err := filepath.Rel(base, real)
	if err != nil || !filepath.IsLocal(r) && r != "." {
		return invalid("path %s escapes the workspace through a symbolic link", name)
	}
	if reserved(r) {
		return invalid("path %s leads through a symbolic link into %s, which holds carryon's own files", name, Reserved)
	}
	return nil
}

// checkReserved refuses the paths of carryon's own files: the Reserved directory at the top of
// the workspace and write_file's temporary files.
func checkReserved(rel, name string) error {
	if reserved(rel) {
		return invalid("path %s is inside %s, which holds carryon's own files; use another name", name, Reserved)
	}
	if isTemp(filepath.Base(rel)) {
		return invalid("path %s is named like one of write_file's temporary files; use another name", name)
	}
	return nil
}

// reserved reports whether rel (cleaned, relative) is the Reserved directory or inside it. The
// comparison ignores case, for file systems that do.
func reserved(rel string) bool {
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return strings.EqualFold(first, Reserved)
}

// openRoot opens the workspace as an os.Root, creating it first (0700, and any missing parent
// too) when create is set.
func openRoot(workspace string, create bool) (*os.Root, error) {
	if create {
		if err := os.MkdirAll(workspace, 0o700); err != nil {
			return nil, err
		}
	}
	return os.OpenRoot(workspace)
}

// createFor reports whether a tool call may create its workspace: only a call outside a run. A
// run's attempt claimed the workspace (and so made it) before its first tool call, so a missing
// workspace under a run was removed since, with its session (deleted, purged or forgotten), and
// a write must not make it again: its files would outlive the session.
func createFor(c tool.Call) bool { return c.Fence.IsZero() }

// gone is describe for the opening of a workspace, which under a run is missing only because
// its session was deleted.
func gone(op, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return carryon.Errorf(carryon.ENOTFOUND, "%s: the session's workspace is gone (the session was deleted)", op)
	}
	return describe(op, name, err)
}

// describe turns an error of a file operation on name into one the model can act on.
func describe(op, name string, err error) error {
	var ce *carryon.Error
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return carryon.Errorf(carryon.ENOTFOUND, "%s: %s does not exist", op, name)
	case errors.Is(err, fs.ErrPermission):
		return carryon.Errorf(carryon.EINVALID, "%s: permission denied for %s", op, name)
	case strings.Contains(err.Error(), "escapes"), strings.Contains(err.Error(), "symbolic link"):
		return invalid("%s: path %s escapes the workspace", op, name)
	}
	return err
}
