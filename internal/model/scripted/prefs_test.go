package scripted

import (
	"testing"

	"github.com/carryon-hub/carryon/internal/contextbuild"
)

func TestPreference(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"I prefer dark mode in the editor.":             "I prefer dark mode in the editor",
		"Hello. Remember that deploys happen on Friday": "Remember that deploys happen on Friday",
		"Always use tabs!":                              "Always use tabs",
		"Which editor do I prefer?":                     "",
		"what do I prefer":                              "",
		"Plan a trip to Rome":                           "",
	} {
		if got := preference(msg); got != want {
			t.Errorf("preference(%q) = %q, want %q", msg, got, want)
		}
	}
	for s, want := range map[string]string{
		"I prefer dark mode in the editor":       "dark-mode-editor",
		"Remember that deploys happen on Friday": "deploys-happen-on-friday",
		"Always!":                                "preference",
	} {
		if got := prefKey(s); got != want {
			t.Errorf("prefKey(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestParseLongTerm(t *testing.T) {
	t.Parallel()
	sys := "intro\n\n" + contextbuild.HeadingLongTerm + "\n- prefs/dark-mode-editor: I prefer dark mode (score 1.00)\n- notes/x: \"raw\" (recent)\n\n## Recent tool calls\n- y: z"
	got := parseLongTerm(sys)
	if len(got) != 2 || got[0] != "I prefer dark mode" || got[1] != `"raw"` {
		t.Fatalf("parseLongTerm = %q", got)
	}
	if s := notedPreference(got); s != "Noted preference: I prefer dark mode. " {
		t.Fatalf("notedPreference = %q", s)
	}
	if notedPreference(nil) != "" || parseLongTerm("no section") != nil {
		t.Fatal("no long-term memory must give nothing")
	}
}
