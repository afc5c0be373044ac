package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cli runs the program against a server and returns its stdout.
func cli(t *testing.T, srv *server, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := envMap(map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": srv.data})
	if err := run(context.Background(), args, e, nil, &stdout, &stderr); err != nil {
		t.Fatalf("carryon %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func TestSessionCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	srv := startServer(t, data)
	key := localKey(t, data)
	id := must(t, srv.url, key, "POST", "/v1/sessions", map[string]any{"title": "morning task", "working_memory": map[string]any{"goal": "ship v1", "next_action": "write docs"}}, 201).json(t)["id"].(string)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}}}, 201)

	if out := cli(t, srv, "sessions", "ls"); !strings.Contains(out, id) || !strings.Contains(out, "morning task") {
		t.Fatalf("sessions ls:\n%s", out)
	}
	out := cli(t, srv, "sessions", "show", id)
	for _, want := range []string{"ship v1", "write docs", "hello", "hi"} {
		if !strings.Contains(out, want) {
			t.Fatalf("sessions show lacks %q:\n%s", want, out)
		}
	}
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(cli(t, srv, "sessions", "export", id)))
	for sc.Scan() {
		var line struct{ Kind, Format string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		kinds = append(kinds, line.Format+line.Kind)
	}
	if got := strings.Join(kinds, ","); got != "carryon.session,session,message,message,working_memory_revision,end" {
		t.Fatalf("export lines: %s", got)
	}
	fork := cli(t, srv, "sessions", "fork", id, "--at-version", "1")
	forkID, _, _ := strings.Cut(fork, " ")
	if v := must(t, srv.url, key, "GET", "/v1/sessions/"+forkID, nil, 200).json(t); v["message_count"] != 0.0 || v["parent_id"] != id {
		t.Fatalf("fork at version 1: %v", v)
	}
	cli(t, srv, "sessions", "close", id)
	must(t, srv.url, key, "POST", "/v1/sessions/"+id+"/messages", appendBody("x"), 409)
	cli(t, srv, "sessions", "restore", id)
	cli(t, srv, "sessions", "rm", id)
	must(t, srv.url, key, "GET", "/v1/sessions/"+id, nil, 404)
}

// TestGracefulShutdown: SIGTERM lets the server finish and exit 0.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	srv := startServer(t, t.TempDir())
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop after SIGTERM")
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	for _, args := range [][]string{{}, {"nope"}, {"sessions"}, {"serve", "--addr"}, {"users", "add"}} {
		if err := run(context.Background(), args, envMap(nil), nil, &out, &out); err == nil {
			t.Errorf("carryon %v: no error", args)
		}
	}
	e := envMap(map[string]string{"CARRYON_IDLE_TTL": "soon"})
	err := run(context.Background(), []string{"serve", "--data", t.TempDir()}, e, nil, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "CARRYON_IDLE_TTL") {
		t.Fatalf("bad env value: %v", err)
	}
}
