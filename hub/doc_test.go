package hub_test

import (
	"os"
	"strings"
	"testing"
)

// TestLibraryDocMatchesExample: the program of docs/LIBRARY.md is Example's body, so the page
// shows a program that compiles and does what its output says.
func TestLibraryDocMatchesExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/LIBRARY.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := between(t, string(src), "func Example() {\n", "\t// Output:")
	page := between(t, string(doc), "func main() {\n", "}\n```")
	if strings.TrimSpace(body) != strings.TrimSpace(page) {
		t.Fatalf("docs/LIBRARY.md's main differs from Example in example_test.go:\n--- page\n%s\n--- example\n%s", page, body)
	}
	out := between(t, string(src), "\t// Output:\n", "}\n")
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		want = append(want, strings.TrimPrefix(strings.TrimSpace(l), "// "))
	}
	if !strings.Contains(string(doc), "```\n"+strings.Join(want, "\n")+"\n```") {
		t.Fatalf("docs/LIBRARY.md does not show the example's output:\n%s", strings.Join(want, "\n"))
	}
}

// between returns the text of s after start up to the next end.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, after, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("no %q", start)
	}
	before, _, ok := strings.Cut(after, end)
	if !ok {
		t.Fatalf("no %q after %q", end, start)
	}
	return before
}
