// Package testtools holds tools that count their own effects, for crash and recovery tests and
// demos of the journal: test_tally (idempotent: deduplicates by the call's idempotency key, so a
// rerun after a crash counts once) and test_append (unsafe: every execution appends a line, so a
// rerun shows). The server registers them only when CARRYON_TEST_TOOLS=1.
package testtools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Tools returns test_tally and test_append.
func Tools() []tool.Tool { return []tool.Tool{Tally(), Append()} }

// TallyFile and AppendFile are the files, in the session's workspace, that record the effects.
const (
	TallyFile  = "tally.log"
	AppendFile = "append.log"
)

// Tally returns test_tally.
func Tally() tool.Tool { return tally{} }

type tally struct{}

func (tally) Name() string { return "test_tally" }
func (tally) Description() string {
	return "Counts one event in tally.log, once per call even when the call is retried."
}
func (tally) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}
func (tally) Effect() carryon.EffectClass { return carryon.EffectIdempotent }

func (tally) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	path := filepath.Join(c.Workspace, TallyFile)
	if err := os.MkdirAll(c.Workspace, 0o755); err != nil {
		return tool.Result{}, err
	}
	lines, err := readLines(path)
	if err != nil {
		return tool.Result{}, err
	}
	for _, l := range lines {
		if l == c.IdempotencyKey {
			return tool.Result{Content: fmt.Sprintf("already counted (%d in all)", len(lines))}, nil
		}
	}
	if err := appendLine(path, c.IdempotencyKey); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: fmt.Sprintf("counted (%d in all)", len(lines)+1)}, nil
}

// Append returns test_append.
func Append() tool.Tool { return appendTool{} }

type appendTool struct{}

func (appendTool) Name() string { return "test_append" }
func (appendTool) Description() string {
	return "Appends a line to append.log. Not safe to repeat: every execution appends."
}
func (appendTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
}
func (appendTool) Effect() carryon.EffectClass { return carryon.EffectUnsafe }

func (appendTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	var args struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return tool.Result{}, err
	}
	if err := os.MkdirAll(c.Workspace, 0o755); err != nil {
		return tool.Result{}, err
	}
	if err := appendLine(filepath.Join(c.Workspace, AppendFile), args.Text); err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: "appended"}, nil
}

// ReadLines returns the lines of a file, none when it does not exist.
func ReadLines(path string) ([]string, error) { return readLines(path) }

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
