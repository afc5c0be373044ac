package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeStartup: serve says where it listens on the first line of stdout (the line scripts
// read), where the local user's key file is on the next, and the inspector's URL on the third;
// the logs do not say the address again.
func TestServeStartup(t *testing.T) {
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", data}, envMap(nil), nil, pw, stderr)
		pw.Close()
	}()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out []string
	for len(out) < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended after %q: %v\n%s", out, <-done, stderr)
			}
			out = append(out, l)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve printed %q in 30 s\n%s", out, stderr)
		}
	}
	m := regexp.MustCompile(`^carryon listening on (http://127\.0\.0\.1:[0-9]+) \(data (.+)\)$`).FindStringSubmatch(out[0])
	if m == nil || m[2] != data {
		t.Fatalf("first line %q", out[0])
	}
	url := m[1]
	if want := "local user's key file: " + filepath.Join(data, "local.key") + " "; !strings.HasPrefix(out[1], want) {
		t.Fatalf("second line %q, want it to start with %q", out[1], want)
	}
	if out[2] != "inspector: "+url+"/ui/ (docs/INSPECTOR.md)" {
		t.Fatalf("third line %q, want the inspector's URL", out[2])
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}
	for l := range lines {
		out = append(out, l)
	}
	all := strings.Join(out, "\n") + "\n" + stderr.String()
	if n := strings.Count(all, strings.TrimPrefix(url, "http://")); n != 2 {
		t.Fatalf("the address %s is said %d times, want twice (listening, inspector):\n%s", url, n, all)
	}
	if i, j := strings.Index(stderr.String(), "opening the database"), strings.Index(stderr.String(), "carryon started"); i < 0 || j < i {
		t.Fatalf("the logs do not say the database opens, then the start:\n%s", stderr)
	}
}
