package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
)

// writeSizes is a ResponseWriter that keeps what is written and the size of its largest write.
type writeSizes struct {
	*httptest.ResponseRecorder
	largest int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.largest = max(w.largest, len(p))
	return w.ResponseRecorder.Write(p)
}

// TestPagesAreWrittenAnItemAtATime: a page is answered with the same bytes writeJSON would
// write, but no single write holds more than one item: the answer is never built whole. (On
// 6d11171 every page was encoded into one buffer and written at once.)
func TestPagesAreWrittenAnItemAtATime(t *testing.T) {
	s := &server{logger: slog.New(slog.DiscardHandler)}
	big := strings.Repeat("x", 64<<10)
	page := carryon.MessagePage{NextCursor: "c1"}
	for i := range 8 {
		page.Items = append(page.Items, &carryon.Message{Seq: int64(i + 1), Role: carryon.RoleUser, Content: big + "<&>"})
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/sessions/s/messages", nil)
	whole := httptest.NewRecorder()
	s.writeJSON(whole, r, http.StatusOK, page)
	streamed := &writeSizes{ResponseRecorder: httptest.NewRecorder()}
	s.writeStreamed(streamed, r, page)
	if streamed.Code != http.StatusOK || streamed.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("streamed: %d %v", streamed.Code, streamed.Header())
	}
	if got, want := streamed.Body.String(), whole.Body.String(); got != want {
		t.Fatalf("streamed answer differs from the whole one:\n%.300s\n%.300s", got, want)
	}
	if item := len(big) + 200; streamed.largest > item {
		t.Fatalf("the largest write is %d bytes, more than one item (%d)", streamed.largest, item)
	}
	// A one-item page, an empty one and anything that is no page are written whole, the same.
	for _, v := range []any{carryon.MessagePage{Items: page.Items[:1]}, carryon.MessagePage{}, carryon.RunPage{}, map[string]int{"a": 1}} {
		a, b := httptest.NewRecorder(), httptest.NewRecorder()
		s.writeJSON(a, r, http.StatusOK, v)
		s.writeStreamed(b, r, v)
		if a.Body.String() != b.Body.String() {
			t.Fatalf("%T: %q, want %q", v, b.Body.String(), a.Body.String())
		}
	}
}
