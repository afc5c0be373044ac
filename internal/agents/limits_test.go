package agents_test

import (
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
	"github.com/carryon-hub/carryon/internal/model"
)

// TestModelLimits: a profile's model limits are the file's, each bound it leaves out taking the
// default; a bound must be more than 0; each one is part of the digest.
func TestModelLimits(t *testing.T) {
	t.Parallel()
	src := `
providers:
  off: {kind: scripted}
agents:
  default:
    provider: off
  tight:
    provider: off
    model_first_byte_timeout: 5s
    model_idle_timeout: 2s
    model_timeout: 1m
    model_max_output_bytes: 4096
  partly:
    provider: off
    model_timeout: 20m
`
	set, err := agents.Parse("agents.yaml", []byte(src), agents.Options{Getenv: getenv(nil), Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	d := agents.DefaultModelLimits()
	if d != (model.Limits{FirstByte: time.Minute, Idle: time.Minute, Total: 10 * time.Minute, MaxOutputBytes: 1 << 20}) {
		t.Fatalf("the defaults changed to %+v: change docs/AGENTS.md and this test together", d)
	}
	partly := d
	partly.Total = 20 * time.Minute
	for name, want := range map[string]model.Limits{
		"default": d,
		"tight":   {FirstByte: 5 * time.Second, Idle: 2 * time.Second, Total: time.Minute, MaxOutputBytes: 4096},
		"partly":  partly,
	} {
		if got := set.Profiles[name].ModelLimits; got != want {
			t.Errorf("%s: limits %+v, want %+v", name, got, want)
		}
	}
	// GET /v1/agents (and agents check) show them.
	list, err := set.ListAgents(carryon.NewContextWithUser(t.Context(), &carryon.User{ID: "usr_a", Name: "a"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list.Items {
		if a.Name == "tight" && (a.ModelLimits == nil || *a.ModelLimits != carryon.AgentModelLimits{FirstByteTimeoutSeconds: 5, IdleTimeoutSeconds: 2, TimeoutSeconds: 60, MaxOutputBytes: 4096}) {
			t.Errorf("tight's view: %+v", a.ModelLimits)
		}
		if a.Name == "default" && (a.ModelLimits == nil || a.ModelLimits.TimeoutSeconds != 600) {
			t.Errorf("default's view: %+v", a.ModelLimits)
		}
	}
	for _, change := range []string{"model_first_byte_timeout: 6s", "model_idle_timeout: 3s", "model_timeout: 2m", "model_max_output_bytes: 4097"} {
		key, _, _ := strings.Cut(change, ":")
		i := strings.Index(src, "    "+key)
		j := i + strings.Index(src[i:], "\n")
		other, err := agents.Parse("agents.yaml", []byte(src[:i]+"    "+change+src[j:]), agents.Options{Getenv: getenv(nil), Builtin: builtin()})
		if err != nil {
			t.Fatal(err)
		}
		if other.Profiles["tight"].Digest == set.Profiles["tight"].Digest || other.Profiles["default"].Digest != set.Profiles["default"].Digest {
			t.Errorf("after %s the digests are %s and %s", change, other.Profiles["tight"].Digest, other.Profiles["default"].Digest)
		}
	}

	bad := `
providers:
  off: {kind: scripted}
agents:
  default:
    provider: off
    model_first_byte_timeout: 0s
    model_idle_timeout: soon
    model_timeout: -1m
    model_max_output_bytes: 0
`
	msg := parseErr(t, bad, nil)
	for _, want := range []string{
		"agents.yaml:7: agents.default.model_first_byte_timeout: must be more than 0, such as 30s",
		`agents.yaml:8: agents.default.model_idle_timeout: must be a duration such as 30s or 1m30s, not "soon"`,
		"agents.yaml:9: agents.default.model_timeout: must be more than 0, such as 30s",
		"agents.yaml:10: agents.default.model_max_output_bytes: must be 1 or more, not 0",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q\nwant %q", msg, want)
		}
	}
}

// TestModelLimitsFromFlags: the default profile of the flags takes the flags' limits, and the
// defaults for those not given.
func TestModelLimitsFromFlags(t *testing.T) {
	t.Parallel()
	set, err := agents.FromFlags(agents.Flags{Provider: "scripted", ModelLimits: model.Limits{Idle: 7 * time.Second, MaxOutputBytes: 100}},
		agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	want := agents.DefaultModelLimits()
	want.Idle, want.MaxOutputBytes = 7*time.Second, 100
	if got := set.Profiles["default"].ModelLimits; got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
}
