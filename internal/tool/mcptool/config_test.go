package mcptool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := []mcptool.Config{
		{Name: "files", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}},
		{Name: "search_v2", URL: "https://search.example/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
		{Name: "a-b", Command: []string{"srv"}, Env: map[string]string{"TOKEN": "t"}, CallTimeout: 5e9},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []struct {
		want string
		cfg  mcptool.Config
	}{
		{"the name", mcptool.Config{Name: "", Command: []string{"x"}}},
		{"the name", mcptool.Config{Name: "a__b", Command: []string{"x"}}},
		{"the name", mcptool.Config{Name: "trailing_", Command: []string{"x"}}},
		{"the name", mcptool.Config{Name: "has space", Command: []string{"x"}}},
		{"the name", mcptool.Config{Name: strings.Repeat("a", 33), Command: []string{"x"}}},
		{"exactly one", mcptool.Config{Name: "x"}},
		{"exactly one", mcptool.Config{Name: "x", Command: []string{"a"}, URL: "http://h/mcp"}},
		{"the program", mcptool.Config{Name: "x", Command: []string{" "}}},
		{"not a variable", mcptool.Config{Name: "x", Command: []string{"a"}, Env: map[string]string{"A=B": "c"}}},
		{"only for a command", mcptool.Config{Name: "x", URL: "http://h/mcp", Env: map[string]string{"A": "b"}}},
		{"not an http", mcptool.Config{Name: "x", URL: "ftp://h/mcp"}},
		{"not an http", mcptool.Config{Name: "x", URL: "/relative"}},
		{"not a header name", mcptool.Config{Name: "x", URL: "http://h/mcp", Headers: map[string]string{"Bad Header": "v"}}},
		{"line break", mcptool.Config{Name: "x", URL: "http://h/mcp", Headers: map[string]string{"X": "a\r\nEvil: 1"}}},
		{"only for a url", mcptool.Config{Name: "x", Command: []string{"a"}, Headers: map[string]string{"X": "1"}}},
		{"negative", mcptool.Config{Name: "x", Command: []string{"a"}, CallTimeout: -1}},
	}
	for _, b := range bad {
		err := b.cfg.Validate()
		if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: err = %v, want EINVALID mentioning %q", b.cfg, err, b.want)
		}
	}
	// A Server built from a bad config fails every use with that error.
	s := mcptool.New(mcptool.Config{Name: "x"}, nil)
	defer s.Close()
	if _, err := s.Tools(context.Background()); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Errorf("Tools of an invalid server: %v", err)
	}
	var _ tool.Source = s
}
