package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestUsersRm: carryon users rm forgets a user on the database itself, removes the workspace
// directories of its sessions, and prints the receipt as text or JSON; a second rm finds no user.
func TestUsersRm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	for _, name := range []string{"dave", "erin"} {
		if out, err := captureRun(ctx, "users", "add", name, "--data", data); err != nil {
			t.Fatalf("users add: %v\n%s", err, out)
		}
	}
	out, err := captureRun(ctx, "users", "rm", "dave", "--data", data)
	if err != nil || !strings.Contains(out, "forgot user usr_") || !strings.Contains(out, "1 keys") ||
		!strings.Contains(out, `msg="user forgotten" audit=user.forget`) || !strings.Contains(out, "by=operator") {
		t.Fatalf("users rm: %v\n%s", err, out)
	}
	if _, err := captureRun(ctx, "users", "rm", "dave", "--data", data); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("a second rm: %v", err)
	}
	// A workspace directory of a session of erin's (a session needs a server; the directory is
	// what a run would leave, named by the session id, which rm only removes for erin's sessions).
	ws := filepath.Join(data, "workspaces", "sess_notherss")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err = captureRun(ctx, "users", "rm", "erin", "--json", "--data", data)
	if err != nil {
		t.Fatalf("users rm --json: %v\n%s", err, out)
	}
	var r carryon.ForgetReceipt
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&r); err != nil || r.Deleted.Keys != 1 || r.Deleted.Workspaces != 0 {
		t.Fatalf("users rm --json: %+v, %v\n%s", r, err, out)
	}
	if _, err := os.Stat(ws); err != nil {
		t.Fatalf("rm removed a workspace that was not erin's: %v", err)
	}
}
