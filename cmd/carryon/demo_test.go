package main

import (
	"context"
	"net"
	"strings"
	"testing"
)

// The demo end to end against a real server process; its second process is the real program.
func TestDemo(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	out, err := cliRun(context.Background(), srv, nil, map[string]string{"CARRYON_BIN": binary}, "demo")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	m := sessionLine.FindStringSubmatch(strings.Replace(out, "session      ", "session: ", 1))
	if m == nil {
		t.Fatalf("no session id:\n%s", out)
	}
	for _, want := range []string{
		"goal         Write a short guide to brewing green tea",
		"next action  Research the water temperature",
		"[process 2, pid ", "] knows only " + m[1] + " and says: continue the task",
		"reply        Continuing the task. Goal: Write a short guide to brewing green tea.",
		"next action  Draft the steps",
		"✓ the second process knew the goal and the next action",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
	// The second process really was another process.
	if strings.Count(out, "pid ") != 2 || pidOf(out, 0) == pidOf(out, 1) {
		t.Fatalf("one process, not two:\n%s", out)
	}
}

// pidOf returns the n-th "pid N" of out.
func pidOf(out string, n int) string {
	parts := strings.Split(out, "pid ")
	if len(parts) <= n+1 {
		return "?"
	}
	pid, _, _ := strings.Cut(parts[n+1], ")")
	pid, _, _ = strings.Cut(pid, "]")
	return pid
}

// Without a server the demo says how to start one.
func TestDemoWithoutServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	out, err := cliRun(context.Background(), &server{url: "http://" + addr, data: t.TempDir()}, nil, nil, "demo")
	if err == nil || !strings.Contains(err.Error(), "no carryon server answers at http://"+addr) || !strings.Contains(err.Error(), "carryon serve") {
		t.Fatalf("demo without a server: %v\n%s", err, out)
	}
}
