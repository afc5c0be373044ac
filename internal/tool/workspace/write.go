package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/tool"
)

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file's path relative to the workspace; missing parent directories are created."},
    "content": {"type": "string", "description": "The whole new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

type writeFile struct{}

// WriteFile returns the write_file tool. It replaces a file's content atomically (a temporary file
// in the same directory, fsync, rename, fsync of the directory), so the file holds either the old
// or the new content, never a mix. It is reconcilable: Reconcile compares the file's hash with the
// hash of the intended content.
func WriteFile() tool.Tool { return writeFile{} }

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (writeFile) Name() string { return "write_file" }

func (writeFile) Description() string {
	return fmt.Sprintf("Create or replace a file in the session's workspace with the given content (at most %d KiB). "+
		"Paths are relative to the workspace; missing directories are created.", MaxWriteBytes>>10)
}

func (writeFile) Schema() json.RawMessage { return json.RawMessage(writeSchema) }

func (writeFile) Effect() carryon.EffectClass { return carryon.EffectReconcilable }

func (writeFile) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	args, rel, err := writeTarget(c)
	if err != nil {
		return tool.Result{}, err
	}
	content := []byte(*args.Content)
	if len(content) > MaxWriteBytes {
		return tool.Result{}, carryon.Errorf(carryon.ETOOLARGE,
			"write_file: the content is %d bytes; at most %d bytes can be written at once", len(content), MaxWriteBytes)
	}
	root, err := openRoot(c.Workspace, createFor(c))
	if err != nil {
		return tool.Result{}, gone("write_file", args.Path, err)
	}
	defer root.Close()
	release, err := guard(root, c.Fence) // refuse a stale attempt before touching anything
	if err != nil {
		return tool.Result{}, describe("write_file", args.Path, err)
	}
	release()
	before, mode, err := current(root, rel, args.Path)
	if err != nil {
		return tool.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if err := replace(root, rel, content, mode, c.Fence); err != nil {
		return tool.Result{}, describe("write_file", args.Path, err)
	}
	return tool.Result{
		Content:           fmt.Sprintf("wrote %d bytes to %s", len(content), filepath.ToSlash(rel)),
		FingerprintBefore: before,
		FingerprintAfter:  tool.Fingerprint(content),
	}, nil
}

// Reconcile tells whether a write that was cut off took effect: Applied when the file holds the
// intended content, NotApplied when it is absent or holds anything else, Unknown (with the reason)
// when it cannot be read.
func (writeFile) Reconcile(ctx context.Context, c tool.Call) (tool.Outcome, error) {
	args, rel, err := writeTarget(c)
	if err != nil {
		return tool.Unknown, err
	}
	root, err := openRoot(c.Workspace, false)
	if errors.Is(err, fs.ErrNotExist) {
		return tool.NotApplied, nil // no workspace, so no file
	} else if err != nil {
		return tool.Unknown, describe("write_file", args.Path, err)
	}
	defer root.Close()
	fp, _, err := current(root, rel, args.Path)
	switch {
	case err != nil:
		return tool.Unknown, err
	case fp == tool.Fingerprint([]byte(*args.Content)):
		return tool.Applied, nil
	}
	return tool.NotApplied, nil
}

// writeTarget decodes the arguments and checks the path.
func writeTarget(c tool.Call) (writeArgs, string, error) {
	var args writeArgs
	if err := decode("write_file", c.Args, &args); err != nil {
		return args, "", err
	}
	if args.Path == "" {
		return args, "", invalid(`write_file: field "path" is required`)
	}
	if args.Content == nil {
		return args, "", invalid(`write_file: field "content" is required`)
	}
	rel, err := local(c.Workspace, args.Path)
	if err != nil {
		return args, "", err
	}
	if rel == "." {
		return args, "", invalid("write_file: %s is the workspace itself, not a file", args.Path)
	}
	return args, rel, nil
}

// current returns the fingerprint of the file at rel (Absent when there is none) and its
// permissions (0 when there is none). It
// refuses a target that is a symbolic link or not a regular file.
func current(root *os.Root, rel, name string) (string, fs.FileMode, error) {
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Absent, 0, nil
	} else if err != nil {
		return "", 0, describe("write_file", name, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return "", 0, invalid("write_file: %s is a symbolic link; write_file does not write through links", name)
	}
	if !info.Mode().IsRegular() {
		return "", 0, invalid("write_file: %s is not a regular file", name)
	}
	old, err := root.ReadFile(rel)
	if err != nil {
		return "", 0, describe("write_file", name, err)
	}
	return tool.Fingerprint(old), info.Mode().Perm(), nil
}

// replace writes content to a temporary file beside rel, syncs it, renames it over rel and syncs
// the directory, so that rel holds the old or the new content at every moment, and the new one
// survives a crash once replace returns. The rename happens under the workspace lock, right after
// checking that fence may still write (a runner that lost its run to a newer attempt while it
// wrote the temporary file is refused there, and its file removed). A replaced file keeps its
// permissions (mode); a new one (mode 0) is created 0600, in directories created 0700.
func replace(root *os.Root, rel string, content []byte, mode fs.FileMode, fence tool.Fence) (err error) {
	dir := filepath.Dir(rel)
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(dir, tempName(filepath.Base(rel)))
	perm := mode
	if perm == 0 {
		perm = 0o600
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	if err = writeChunks(f, content); err == nil && mode != 0 {
		err = f.Chmod(mode) // the umask may have narrowed it
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	release, err := guard(root, fence)
	if err != nil {
		return err
	}
	err = root.Rename(tmp, rel)
	release()
	if err != nil {
		return err
	}
	return syncDir(root, dir)
}

// tempName returns a new name for a temporary file beside the file base: ".BASE.tmp-" and 16
// random hex digits. isTemp recognises it.
func tempName(base string) string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return "." + base + tempMark + hex.EncodeToString(rnd[:])
}

const tempMark = ".tmp-"

// isTemp reports whether name (a base name) is one of write_file's temporary files.
func isTemp(name string) bool {
	i := strings.LastIndex(name, tempMark)
	if i < 2 || name[0] != '.' || len(name)-i-len(tempMark) != 16 {
		return false
	}
	_, err := hex.DecodeString(name[i+len(tempMark):])
	return err == nil
}

// chunkSize is how much write_file writes at a time; a crash between chunks leaves a partial
// temporary file and the target untouched.
const chunkSize = 16 << 10

// writeChunks writes content in chunks; the failpoint between the first and the second chunk
// lets crash tests cut a write in the middle (after the first chunk is on disk).
func writeChunks(f *os.File, content []byte) error {
	for off := 0; off < len(content) || off == 0; off += chunkSize {
		end := min(off+chunkSize, len(content))
		if _, err := f.Write(content[off:end]); err != nil {
			return err
		}
		if off == 0 && end < len(content) {
			_ = f.Sync()
			failpoint.Hit(failpoint.WriteMidway)
		}
		if end == len(content) {
			return nil
		}
	}
	return nil
}
