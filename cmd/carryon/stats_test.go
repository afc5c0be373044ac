package main

import (
	"bytes"
	"context"
	"regexp"
	"testing"
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
