package main

import (
	"io"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/agents"
)

// TestModelLimitFlags: the --model-* flags, or their variables, bound the model calls of the
// default profile; those not given keep the defaults; with an agents file they are reported as
// unused.
func TestModelLimitFlags(t *testing.T) {
	t.Parallel()
	var a agentFlags
	fs := newFlagSet("serve", "", io.Discard)
	a.register(fs.FlagSet)
	getenv := envMap(map[string]string{"CARRYON_MODEL_IDLE_TIMEOUT": "5s"})
	if _, err := fs.parse(getenv, []string{"--model-timeout", "2m", "--model-max-output-bytes", "5000"}); err != nil {
		t.Fatal(err)
	}
	set, err := a.load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	got := set.Profiles["default"].ModelLimits
	want := agents.DefaultModelLimits()
	want.Idle, want.Total, want.MaxOutputBytes = 5*time.Second, 2*time.Minute, 5000
	if got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
	a.file = "agents.yaml"
	if unused := a.ignoredBy(fs.FlagSet); len(unused) != 3 {
		t.Fatalf("unused with an agents file: %v, want the three model flags", unused)
	}
}
