package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file's path relative to the workspace, e.g. notes/todo.md."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

type readFile struct{}

// ReadFile returns the read_file tool: it returns a file's content (cut with a note past
// MaxReadBytes) and fingerprints it by the hash of its whole content.
func ReadFile() tool.Tool { return readFile{} }

func (readFile) Name() string { return "read_file" }

func (readFile) Description() string {
	return fmt.Sprintf("Read a text file from the session's workspace. Paths are relative to the workspace. "+
		"Files over %d KiB are cut with a note.", MaxReadBytes>>10)
}

func (readFile) Schema() json.RawMessage { return json.RawMessage(readSchema) }

func (readFile) Effect() carryon.EffectClass { return carryon.EffectRead }

func (readFile) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := decode("read_file", c.Args, &args); err != nil {
		return tool.Result{}, err
	}
	if args.Path == "" {
		return tool.Result{}, invalid(`read_file: field "path" is required`)
	}
	rel, err := local(c.Workspace, args.Path)
	if err != nil {
		return tool.Result{}, err
	}
	root, err := openRoot(c.Workspace, false)
	if err != nil {
		return tool.Result{}, describe("read_file", args.Path, err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return tool.Result{}, describe("read_file", args.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return tool.Result{}, describe("read_file", args.Path, err)
	}
	if !info.Mode().IsRegular() {
		return tool.Result{}, invalid("read_file: %s is not a regular file (list_files lists a directory)", args.Path)
	}
	// Hash the whole file while keeping only its head, so a big file costs no memory.
	h := sha256.New()
	head := &capped{max: MaxReadBytes}
	n, err := io.Copy(io.MultiWriter(h, head), f)
	if err != nil {
		return tool.Result{}, describe("read_file", args.Path, err)
	}
	fp := "sha256:" + hex.EncodeToString(h.Sum(nil))
	return tool.Result{Content: render(head.buf.Bytes(), n), FingerprintBefore: fp, FingerprintAfter: fp}, nil
}

// render returns the head of a file of size bytes as text, with a note when it was cut or is not
// text.
func render(head []byte, size int64) string {
	if bytes.IndexByte(head, 0) >= 0 {
		return fmt.Sprintf("[binary file, %d bytes, not shown]", size)
	}
	cut := int64(len(head)) < size
	if cut {
		// Do not end in the middle of a UTF-8 sequence.
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	if !utf8.Valid(head) {
		return fmt.Sprintf("[binary file, %d bytes, not shown]", size)
	}
	if cut {
		return fmt.Sprintf("%s\n[truncated: showing the first %d of %d bytes]", head, len(head), size)
	}
	return string(head)
}

// capped keeps the first max bytes written to it and discards the rest.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
