package mcptool

import (
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// readFrames reads everything through a frameReader with the given limit, the source handing
// out a few bytes at a time.
func readFrames(t *testing.T, in string, limit int) []string {
	t.Helper()
	r := newFrameReader(iotest.HalfReader(strings.NewReader(in)), limit, slog.New(slog.DiscardHandler))
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for l := range strings.Lines(string(b)) {
		out = append(out, l)
	}
	return out
}

type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeAnswer(t *testing.T, line string) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("replacement %.300q: %v", line, err)
	}
	return a
}

func TestSmallMessagesPassUnchanged(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + strings.Repeat(" ", 63) + "{}\r\n" + `{"jsonrpc":"2.0","method":"x"}`
	got := readFrames(t, in, 67)
	if strings.Join(got, "") != in || len(got) != 3 {
		t.Errorf("got %q", got)
	}
}

func TestAnOversizeAnswerIsClippedWhateverTheOrderOfItsMembers(t *testing.T) {
	text := "start é \"q\" \\ \u2603 " + strings.Repeat("0123456789", 40_000) // 400 kB, past what is kept
	quoted, _ := json.Marshal(text)
	for name, msg := range map[string]string{
		"id first (go-sdk)": `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(quoted) + `}],"isError":true}}`,
		"id last (TypeScript SDK)": `{"result":{"isError":true,"content":[{"text":` + string(quoted) + `,"type":"text"},` +
			`{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":{"id":1,"text":"no"}},"jsonrpc":"2.0","id":"req-7"}`,
	} {
		t.Run(name, func(t *testing.T) {
			got := readFrames(t, msg+"\n"+`{"jsonrpc":"2.0","id":8,"result":{}}`+"\n", 1000)
			if len(got) != 2 || got[1] != `{"jsonrpc":"2.0","id":8,"result":{}}`+"\n" {
				t.Fatalf("the next message is not intact: %d messages, last %.100q", len(got), got[len(got)-1])
			}
			a := decodeAnswer(t, got[0])
			if want := map[bool]string{true: `"req-7"`, false: `7`}[strings.Contains(name, "last")]; string(a.ID) != want {
				t.Errorf("id %s, want %s", a.ID, want)
			}
			if a.Result == nil || len(a.Result.Content) != 1 || !a.Result.IsError {
				t.Fatalf("replacement %.300q", got[0])
			}
			body, note, ok := strings.Cut(a.Result.Content[0].Text, "\n[truncated: ")
			if !ok || !strings.HasPrefix(text, body) || len(body) < replacementTextBytes-12 || len(body)+len(note) > MaxResultBytes {
				t.Errorf("text of %d bytes, note %q", len(body), note)
			}
			if !strings.Contains(note, "the MCP server's answer was "+strconv.Itoa(len(msg)+1)+" bytes, more than the 1000 bytes") {
				t.Errorf("note %q", note)
			}
			if strings.Contains(name, "last") && !strings.Contains(note, "1 content blocks of other types are left out") {
				t.Errorf("note %q does not count the image", note)
			}
		})
	}
}

func TestOtherOversizeMessages(t *testing.T) {
	long := strings.Repeat("x", 5000)
	next := `{"jsonrpc":"2.0","id":9,"result":{}}` + "\n"
	errorAnswer := `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"` + long + `"}}`
	in := errorAnswer + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + long + `"}}` + "\n" + // left out
		`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"` + long + `"}}` + "\n" + // left out
		`[{"jsonrpc":"2.0","id":5,"result":{"x":"` + long + `"}}]` + "\n" + // a batch: left out
		`{"jsonrpc":"2.0","id":6,"result":{"structuredContent":{"x":"` + long + `"}}}` + "\n" + // no text
		next
	got := readFrames(t, in, 1000)
	if len(got) != 3 || got[2] != next {
		t.Fatalf("got %d messages: %.200q", len(got), got)
	}
	if a := decodeAnswer(t, got[0]); string(a.ID) != "3" || a.Error == nil || a.Error.Code != -32603 ||
		!strings.Contains(a.Error.Message, "the MCP server's answer was "+strconv.Itoa(len(errorAnswer)+1)+" bytes, more than the 1000 bytes carryon reads") {
		t.Errorf("error answer: %s", got[0])
	}
	if a := decodeAnswer(t, got[1]); string(a.ID) != "6" || a.Result == nil || !strings.HasSuffix(a.Result.Content[0].Text, "none of its text is kept]") {
		t.Errorf("answer without text: %s", got[1])
	}
}

func TestTheScanDoesNotDependOnWhereThePiecesEnd(t *testing.T) {
	text := "a\\\"é\u2603\U0001F600" + strings.Repeat("\\u00e9\\ud83d\\ude00", 20)
	msg := `{"id" : "x\"y", "result" : {"content" : [ {"type":"text", "text":"` + text + `"} ]}}`
	whole := newFrameScan(1 << 20)
	whole.feed([]byte(msg))
	want, _ := whole.text()
	if string(whole.id) != `"x\"y"` || !whole.hasResult || want == "" {
		t.Fatalf("whole: id %s, result %v, text %q", whole.id, whole.hasResult, want)
	}
	for budget := range len(text) + 2 {
		sc := newFrameScan(budget)
		for i := range len(msg) {
			sc.feed([]byte{msg[i]})
		}
		got, _ := sc.text()
		if string(sc.id) != string(whole.id) || !strings.HasPrefix(want, got) || (budget > len(text) && got != want) {
			t.Errorf("budget %d: id %s, text %q (of %q)", budget, sc.id, got, want)
		}
	}
}
