package mcptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/mcptool"
)

func TestAResultLargerThanAMessageIsClipped(t *testing.T) {
	t.Parallel()
	cfg, _ := hardConfig(t)
	_, tools := hardTools(t, cfg)
	before, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	size := mcptool.MaxMessageBytes + 1<<20
	res, err := tools["big"].Call(context.Background(), tool.Call{Args: json.RawMessage(`{"bytes":` + strconv.Itoa(size) + `}`)})
	if err != nil {
		t.Fatalf("a result over the message limit: %v", err)
	}
	body, note, ok := strings.Cut(res.Content, "\n[truncated: ")
	if !ok {
		t.Fatalf("no truncation note in %d bytes: %.200q", len(res.Content), res.Content)
	}
	if !strings.HasPrefix(bigText(size), body) || len(body) < mcptool.MaxResultBytes/2 || len(res.Content) > mcptool.MaxResultBytes {
		t.Errorf("the clipped text is %d bytes (the whole result %d), not the start of the answer", len(body), len(res.Content))
	}
	// The note says how large the answer was: its message is the text's size and then some.
	var answer int
	if _, err := fmt.Sscanf(note, "the MCP server's answer was %d bytes", &answer); err != nil || answer <= size {
		t.Errorf("note %q: answer %d bytes, the text alone is %d (%v)", note, answer, size, err)
	}
	// The connection survived: the same process answers.
	after, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil || after.Content != before.Content {
		t.Errorf("after the large result: pid %q (before %q), %v", after.Content, before.Content, err)
	}
}
