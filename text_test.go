package carryon_test

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// CheckJSONText refuses what no store keeps and not every client reads back: invalid UTF-8, NUL,
// numbers beyond a 64-bit float, and nesting deeper than MaxJSONDepth (brackets inside strings
// do not count); it passes everything else, invalid JSON included (the caller's decoding refuses
// that).
func TestCheckJSONText(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		raw  string
		want string // a part of the error, "" for none
	}{
		{`{"a":[1,2,{"b":"c"}]}`, ""},
		{deep(carryon.MaxJSONDepth), ""},
		{deep(carryon.MaxJSONDepth + 1), "nested more than 128 levels"},
		{`{"s":"` + strings.Repeat("[", 500) + `"}`, ""},
		{`{"s":"\"[[[[","t":` + deep(carryon.MaxJSONDepth+1) + `}`, "nested more than"},
		{`{"n":"a\u0000b"}`, "NUL"},
		{`{"n":1e400}`, "beyond the range"},
		{"\"\xff\"", "UTF-8"},
		{`{"unclosed":`, ""},
	} {
		err := carryon.CheckJSONText("v", []byte(c.raw))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.40q: %v", c.raw, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.40q: %v, want an error with %q", c.raw, err, c.want)
		}
	}
}
