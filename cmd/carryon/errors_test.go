package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestErrorText: the program states a refusal as "carryon: <sentence> (<code>)" on stderr, not
// as the Go text of the error, with a hint on the next line where there is one, and keeps its
// exit status: 1 for a refusal, 2 for a mistake in the command line.
func TestErrorText(t *testing.T) {
	srv := startServer(t, t.TempDir())
	id := mustSession(t, srv) // at version 1
	for _, tc := range []struct {
		args  []string
		code  int
		first *regexp.Regexp
		next  string
	}{
		{[]string{"sessions", "show", "sess_nope"}, 1, regexp.MustCompile(`^carryon: [a-z][^()]* \(not_found\)$`), ""},
		{[]string{"sessions", "close", id, "--expected-version", "7"}, 1,
			regexp.MustCompile(`^carryon: expected version 7 but the session is at version 1[^()]* \(version_conflict\)$`),
			"  the session is at version 1: look at it again, then pass --expected-version 1"},
		{[]string{"memory", "put", "Bad NS", "k", "1"}, 1, regexp.MustCompile(`^carryon: [^()]+ \(invalid_request\)$`), ""},
		{[]string{"sessions", "show"}, 2, regexp.MustCompile(`^carryon: usage: carryon sessions COMMAND`), ""},
	} {
		_, stderr, code := runBinary(t, []string{"CARRYON_SERVER=" + srv.url, "CARRYON_DATA=" + srv.data, "CARRYON_KEY="}, tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if code != tc.code || !tc.first.MatchString(lines[0]) || strings.Contains(stderr.String(), "code=") {
			t.Errorf("carryon %s: exit %d (want %d), stderr:\n%s", strings.Join(tc.args, " "), code, tc.code, stderr.String())
		}
		if tc.next != "" && (len(lines) != 2 || lines[1] != tc.next) {
			t.Errorf("carryon %s: want the hint %q on the second line:\n%s", strings.Join(tc.args, " "), tc.next, stderr.String())
		}
	}

	// report, which main calls with what run returns, states the same.
	var stdout, stderr bytes.Buffer
	e := envMap(map[string]string{"CARRYON_SERVER": srv.url, "CARRYON_DATA": srv.data})
	err := run(context.Background(), []string{"runs", "show", "run_nope"}, e, nil, &stdout, &stderr)
	var out bytes.Buffer
	if code := report(err, &out); code != 1 || !regexp.MustCompile(`^carryon: [^()]+ \(not_found\)\n$`).MatchString(out.String()) {
		t.Errorf("runs show run_nope: exit %d, %q", code, out.String())
	}
	if code := report(nil, &out); code != 0 {
		t.Errorf("report(nil) = %d", code)
	}
}

// mustSession makes a session as the server's local user and returns its id.
func mustSession(t *testing.T, srv *server) string {
	t.Helper()
	return must(t, srv.url, localKey(t, srv.data), "POST", "/v1/sessions", map[string]any{"title": "errors"}, 201).json(t)["id"].(string)
}

// TestErrorJSON: with --json a refusal comes out as one JSON object on stderr, with carryon's
// code and the same exit status, on client commands and on the data-directory ones alike.
func TestErrorJSON(t *testing.T) {
	srv := startServer(t, t.TempDir())
	id := mustSession(t, srv)
	for _, tc := range []struct {
		args       []string
		exit       int
		code, hint string
	}{
		{[]string{"sessions", "show", "sess_nope", "--json"}, 1, "not_found", ""},
		{[]string{"users", "rm", "nobody", "--json"}, 1, "not_found", ""},
		{[]string{"sessions", "close", id, "--expected-version", "7", "--json"}, 1, "version_conflict", "the session is at version 1: look at it again, then pass --expected-version 1"},
		{[]string{"sessions", "ls", "--limit", "x", "--json"}, 2, "usage", ""},
	} {
		_, stderr, exit := runBinary(t, []string{"CARRYON_SERVER=" + srv.url, "CARRYON_DATA=" + srv.data, "CARRYON_KEY="}, tc.args...)
		var got struct {
			Error struct{ Code, Message, Hint string }
		}
		if err := json.Unmarshal(stderr.Bytes(), &got); err != nil || exit != tc.exit || got.Error.Code != tc.code || got.Error.Message == "" || got.Error.Hint != tc.hint {
			t.Errorf("carryon %s: exit %d (want %d), %v, stderr:\n%s", strings.Join(tc.args, " "), exit, tc.exit, err, stderr.String())
		}
	}
}
