package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBFlagErrors: a --db that cannot be opened says why, naming the path or the unknown
// scheme, instead of SQLite's "unable to open database file"; an unknown scheme is a usage error
// and creates nothing.
func TestDBFlagErrors(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "no", "such", "dir", "x.db")
	for _, c := range []struct {
		args  []string
		want  []string
		usage bool
	}{
		{[]string{"users", "ls", "--db", "mysql://root:secret@db/x"}, []string{`unknown database scheme "mysql://"`, "postgres://"}, true},
		{[]string{"migrate", "--db", "mysql://x"}, []string{`unknown database scheme "mysql://"`}, true},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", "redis://x"}, []string{`unknown database scheme "redis://"`}, true},
		{[]string{"users", "ls", "--db", missing}, []string{missing, "directory " + filepath.Dir(missing) + " does not exist"}, false},
		{[]string{"migrate", "--db", "sqlite://" + missing}, []string{missing, "does not exist"}, false},
		{[]string{"users", "ls", "--db", tmp}, []string{tmp, "is a directory"}, false},
	} {
		data := filepath.Join(tmp, "data-"+c.args[0])
		var out bytes.Buffer
		err := run(context.Background(), append(c.args, "--data", data), envMap(nil), nil, &out, &out)
		if err == nil {
			t.Fatalf("carryon %s: no error\n%s", strings.Join(c.args, " "), out.String())
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("carryon %s: %q does not say %q", strings.Join(c.args, " "), err, w)
			}
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "unable to open database file") {
			t.Errorf("carryon %s: %q", strings.Join(c.args, " "), err)
		}
		if _, isUsage := errors.AsType[usageError](err); isUsage != c.usage {
			t.Errorf("carryon %s: usage error %v, want %v (%v)", strings.Join(c.args, " "), isUsage, c.usage, err)
		}
		if c.usage {
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("carryon %s made the data directory: %v", strings.Join(c.args, " "), err)
			}
		}
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening created the missing directory: %v", err)
	}
}
