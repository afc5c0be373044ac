package mcptool

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestExposedNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 80)
	got := exposedNames("srv", []string{"a.b", "a_b", "c.d", "c/d", "e f", long, long + "y"})
	if got["a_b"] != "srv__a_b" {
		t.Errorf("a valid name changed: %q", got["a_b"])
	}
	if got["e f"] != "srv__e_f" {
		t.Errorf("a changed name that meets nothing: %q, want srv__e_f", got["e f"])
	}
	for _, n := range []string{"a.b", "c.d", "c/d"} {
		if !strings.HasPrefix(got[n], "srv__"+n[:1]+"_"+n[2:]+"_") || len(got[n]) != len("srv__a_b_")+hashLen {
			t.Errorf("%q -> %q: want the cleaned name and a hash suffix", n, got[n])
		}
	}
	if got["c.d"] == got["c/d"] {
		t.Errorf("c.d and c/d collide: %q", got["c.d"])
	}
	for _, n := range []string{long, long + "y"} {
		if len(got[n]) != maxNameLen || !validNameRE.MatchString(got[n]) {
			t.Errorf("long name -> %q (%d)", got[n], len(got[n]))
		}
	}
	if got[long] == got[long+"y"] {
		t.Error("two long names that differ only past the cut collide")
	}
	// A real tool named like another's suffixed name pushes that one to a longer suffix.
	base := exposedNames("srv", []string{"a.b", "a_b"})["a.b"]
	tricky := exposedNames("srv", []string{"a.b", "a_b", strings.TrimPrefix(base, "srv__")})
	if tricky["a.b"] == base || tricky["a.b"] == tricky[strings.TrimPrefix(base, "srv__")] {
		t.Errorf("suffix clash not resolved: %v", tricky)
	}
}

func TestInputSchemaNormalisesObjectSchemas(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`null`:                               `{"type":"object"}`,
		`{}`:                                 `{"type":"object"}`,
		`{"properties":{}}`:                  `{"properties":{},"type":"object"}`,
		`{"type":["object","null"]}`:         `{"type":"object"}`,
		`{"type":"object","required":["a"]}`: `{"required":["a"],"type":"object"}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		got, err := inputSchema(v)
		if err != nil || string(got) != want {
			t.Errorf("%s -> %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{`"object"`, `[]`, `{"type":"string"}`, `{"type":["array"]}`, `{"type":3}`} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		if got, err := inputSchema(v); err == nil {
			t.Errorf("%s was accepted as %s", in, got)
		}
	}
}

func TestBackoffGrowsToItsCap(t *testing.T) {
	t.Parallel()
	want := []time.Duration{0, 0, restartBase, 2 * restartBase, 4 * restartBase}
	for f, w := range want {
		if got := backoff(f); got != w {
			t.Errorf("backoff(%d) = %s, want %s", f, got, w)
		}
	}
	if got := backoff(100); got != restartMax {
		t.Errorf("backoff(100) = %s, want %s", got, restartMax)
	}
}
