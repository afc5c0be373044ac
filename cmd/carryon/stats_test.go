package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/users"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// captureRun runs the program with args and no environment, and returns its stdout and stderr.
func captureRun(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, envMap(nil), nil, &stdout, &stderr)
	return stdout.String() + stderr.String(), err
}

// TestStatsText: carryon stats on a fresh database lists the schema's tables with their rows and
// sizes, and each user; a positional argument is a usage error.
func TestStatsText(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ctx := context.Background()
	if _, err := captureRun(ctx, "users", "add", "carol", "--data", data); err != nil {
		t.Fatal(err)
	}
	out, err := captureRun(ctx, "stats", "--data", data)
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	for _, want := range []string{`(?m)^TABLE\s+ROWS\s+BYTES$`, `(?m)^api_keys\s+1\s+\d+`, `(?m)^users\s+1\s+\d+`,
		`(?m)^sessions\s+0\s+`, `(?m)^total\s+\d+`, `(?m)^carol\s+usr_\w+\s+0\s+0`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("stats output lacks %s:\n%s", want, out)
		}
	}
	if _, err := captureRun(ctx, "stats", "extra", "--data", data); err == nil {
		t.Fatal("stats with an argument did not fail")
	}
}

// TestStatsStorage: carryon stats lists each user's storage by kind, the users with the most
// bytes first, their sessions' workspace files included (a directory of no session counts for
// nobody), in text and in JSON.
func TestStatsStorage(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(data, "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	us := users.New(st, nil)
	ss := sessions.New(st, sessions.Config{})
	trusted := carryon.NewTrustedContext(ctx)
	ids := map[string]string{}
	for name, content := range map[string]string{"carol": "short", "dave": strings.Repeat("long text ", 500)} {
		u, _, err := us.CreateUser(trusted, carryon.NewUser{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		uctx := carryon.NewContextWithUser(ctx, u)
		s, err := ss.Create(uctx, carryon.NewSession{Title: name + "'s"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ss.AppendMessages(uctx, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: content}}}); err != nil {
			t.Fatal(err)
		}
		ids[name] = s.ID
	}
	st.Close()
	// carol's workspace holds more than dave's message; a stray directory counts for nobody.
	for dir, n := range map[string]int{ids["carol"]: 20_000, "sess_gone": 1_000_000} {
		if err := os.MkdirAll(filepath.Join(data, "workspaces", dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "workspaces", dir, "f.bin"), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, err := captureRun(ctx, "stats", "--data", data)
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	for _, want := range []string{`(?m)^STORAGE\s+KIND\s+ROWS\s+BYTES$`, `(?m)^carol\s+messages\s+1\s+5 B$`,
		`(?m)^carol\s+workspace_files\s+1\s+20\.0 kB$`, `(?m)^dave\s+messages\s+1\s+5000 B$`, `(?m)^dave\s+workspace_files\s+0\s+0 B$`,
		`(?m)^dave\s+search_index\s+1\s+\d+`, `(?ms)^carol\s+total.*^dave\s+total`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("stats output lacks %s:\n%s", want, out)
		}
	}

	out, err = captureRun(ctx, "stats", "--json", "--data", data)
	if err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	var rep statsReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if len(rep.Storage) != 2 || rep.Storage[0].Name != "carol" || rep.Storage[1].Name != "dave" {
		t.Fatalf("storage = %+v; want carol, then dave", rep.Storage)
	}
	for _, u := range rep.Storage {
		var rows, bytes int64
		for _, k := range u.Kinds {
			rows += k.Rows
			bytes += k.Bytes
		}
		if u.Rows != rows || u.Bytes != bytes || len(u.Kinds) != 10 {
			t.Fatalf("storage of %s = %+v; want 10 kinds summing to its totals", u.Name, u)
		}
	}
}
