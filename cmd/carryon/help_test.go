package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// overviewCommands are the commands that `carryon help` lists.
func overviewCommands(t *testing.T) []string {
	t.Helper()
	var cmds []string
	for _, line := range strings.Split(usage, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "carryon" && f[1] != "help" && !slices.Contains(cmds, f[1]) {
			cmds = append(cmds, f[1])
		}
	}
	if len(cmds) < 12 {
		t.Fatalf("the overview lists %d commands: %v", len(cmds), cmds)
	}
	return cmds
}

var (
	helpFlagLine = regexp.MustCompile(`^  --([a-z][a-z0-9-]*)( |$)`)
	helpEnv      = regexp.MustCompile(`\(env (CARRYON_[A-Z0-9_]+)\)`)
)

// helpFlags runs `carryon CMD -h` and returns the flags its help lists, each with the
// environment variable it names ("" for none).
func helpFlags(t *testing.T, cmd string) map[string]string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{cmd, "-h"}, envMap(nil), nil, &out, &out); err != nil {
		t.Fatalf("carryon %s -h: %v", cmd, err)
	}
	_, list, _ := strings.Cut(out.String(), "\nFlags:\n")
	flags := map[string]string{}
	cur := ""
	for _, line := range strings.Split(list, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			cur = m[1]
			flags[cur] = ""
		}
		if m := helpEnv.FindStringSubmatch(line); m != nil && cur != "" {
			flags[cur] = m[1]
		}
	}
	return flags
}

// readmeSettings returns the flag → environment variable pairs of the README's settings table.
func readmeSettings(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flagName := regexp.MustCompile("`--([a-z0-9-]+)`")
	envName := regexp.MustCompile("`(CARRYON_[A-Z0-9_]+)`")
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `--") {
			continue
		}
		cols := strings.Split(line, "|")
		flags, envs := flagName.FindAllStringSubmatch(cols[1], -1), envName.FindAllStringSubmatch(cols[2], -1)
		if len(flags) != len(envs) {
			t.Fatalf("README settings row names %d flags and %d variables: %s", len(flags), len(envs), line)
		}
		for i := range flags {
			rows[flags[i][1]] = envs[i][1]
		}
	}
	if len(rows) < 10 {
		t.Fatalf("the README's settings table has %d rows", len(rows))
	}
	return rows
}

// TestEnvBindings: every flag the README's settings table gives a variable is bound to that
// variable, every binding names a flag that some command has, and every binding is documented.
func TestEnvBindings(t *testing.T) {
	has := map[string]string{} // flag → the variable a command's help names for it
	for _, cmd := range overviewCommands(t) {
		for f, e := range helpFlags(t, cmd) {
			if prev, ok := has[f]; ok && prev != e {
				t.Errorf("--%s is bound to %q in one command and %q in another", f, prev, e)
			}
			has[f] = e
		}
	}
	for _, b := range envBindings {
		if got, ok := has[b.flag]; !ok {
			t.Errorf("binding %s → --%s: no command has that flag", b.env, b.flag)
		} else if got != b.env {
			t.Errorf("--%s: help names %q, binding says %s", b.flag, got, b.env)
		}
	}
	readme := readmeSettings(t)
	for f, e := range readme {
		if got := envOf(f); got != e {
			t.Errorf("README: --%s is set by %s, but the flag is bound to %q", f, e, got)
		}
	}
	for _, b := range envBindings {
		if _, ok := readme[b.flag]; !ok {
			t.Errorf("binding --%s ↔ %s is not in the README's settings table", b.flag, b.env)
		}
	}
}

// TestHelp: every command the overview lists has its own help, with an example and its flags,
// printed to stdout by `carryon CMD --help`, `-h` and `carryon help CMD` without a key, a server
// or a data directory, and nothing else is done.
func TestHelp(t *testing.T) {
	cmds := overviewCommands(t)
	data := filepath.Join(t.TempDir(), "data")
	e := envMap(map[string]string{"CARRYON_DATA": data, "CARRYON_SERVER": "http://127.0.0.1:1", "CARRYON_IDLE_TTL": "soon"})
	for _, cmd := range cmds {
		var first string
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}, {"help", cmd}} {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, e, strings.NewReader(""), &stdout, &stderr); err != nil {
				t.Fatalf("carryon %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
			out := stdout.String()
			if stderr.Len() > 0 {
				t.Errorf("carryon %s wrote to stderr: %s", strings.Join(args, " "), stderr.String())
			}
			if !strings.HasPrefix(out, "usage: carryon "+cmd) || !strings.Contains(out, "\nExample") || !strings.Contains(out, "\n  carryon "+cmd) {
				t.Errorf("carryon %s: no usage with an example:\n%s", strings.Join(args, " "), out)
			}
			if first == "" {
				first = out
			} else if out != first {
				t.Errorf("carryon %s differs from carryon %s --help:\n%s", strings.Join(args, " "), cmd, out)
			}
		}
		if cmd != "version" && cmd != "openapi" && !strings.Contains(first, "\nFlags:\n  --") {
			t.Errorf("carryon %s --help lists no flags:\n%s", cmd, first)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("help touched the data directory: %v", err)
	}
	// A group's subcommand takes --help too, and `carryon help` alone is the overview.
	for _, args := range [][]string{{"sessions", "ls", "--help"}, {"users", "add", "-h"}, {"memory", "help"}, {"help"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, e, nil, &stdout, &stderr); err != nil || stdout.Len() == 0 {
			t.Errorf("carryon %s: %v, %d bytes of help", strings.Join(args, " "), err, stdout.Len())
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"help", "nope"}, e, nil, &out, &out); !isUsage(err) {
		t.Errorf("carryon help nope: %v, want a usage error", err)
	}
}

// TestHelpExitStatus: the program itself exits 0 after --help, and 2 after a flag it does not know.
func TestHelpExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"serve", "--help"}, 0}, {[]string{"help", "sessions"}, 0}, {[]string{"serve", "--nope"}, 2}, {[]string{"sessions", "nope"}, 2}} {
		stdout, stderr, code := runBinary(t, []string{"CARRYON_DATA=" + filepath.Join(t.TempDir(), "d"), "CARRYON_KEY="}, tc.args...)
		if code != tc.code {
			t.Errorf("carryon %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), code, tc.code, stderr.String())
		}
		if tc.code == 0 && (stdout.Len() == 0 || stderr.Len() > 0) {
			t.Errorf("carryon %s: help not on stdout alone:\nstdout %q\nstderr %q", strings.Join(tc.args, " "), stdout.String(), stderr.String())
		}
	}
}

// runBinary runs the carryon program with extra environment variables ("NAME=value") and
// returns its stdout, its stderr and its exit status.
func runBinary(t *testing.T, env []string, args ...string) (stdout, stderr *bytes.Buffer, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return stdout, stderr, ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout, stderr, 0
}

// isUsage reports whether err is a mistake in the command line.
func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
