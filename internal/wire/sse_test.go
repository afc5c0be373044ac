package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/wire"
)

func TestSSEEvents(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	rec.Header().Set("Carryon-Run-Id", "run_1")
	sse := wire.StartSSE(rec)
	for _, err := range []error{
		sse.Event("7", "run.step", map[string]int{"step": 1}),
		sse.Event("", "", json.RawMessage(`{"raw":true}`)),
		sse.Comment("keep-alive"),
		sse.Data("[DONE]"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := "id: 7\nevent: run.step\ndata: {\"step\":1}\n\n" + "data: {\"raw\":true}\n\n" + ": keep-alive\n\n" + "data: [DONE]\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body:\n%q\nwant\n%q", got, want)
	}
	h := rec.Result().Header
	if rec.Code != http.StatusOK || h.Get("Content-Type") != wire.MediaSSE || h.Get("Cache-Control") != "no-cache" ||
		h.Get("X-Accel-Buffering") != "no" || h.Get("Carryon-Run-Id") != "run_1" || !rec.Flushed {
		t.Fatalf("status %d, headers %v, flushed %v", rec.Code, h, rec.Flushed)
	}
}

// failing is a ResponseWriter whose writes fail after the first n bytes.
type failing struct {
	httptest.ResponseRecorder
	left int
}

func (f *failing) Write(b []byte) (int, error) {
	if len(b) > f.left {
		return 0, errors.New("connection reset")
	}
	f.left -= len(b)
	return f.ResponseRecorder.Write(b)
}

// TestSSEAfterAFailedWrite: once a write failed (the client left), every later one fails
// without writing, keep-alives included, so a handler learns of it at its next event.
func TestSSEAfterAFailedWrite(t *testing.T) {
	t.Parallel()
	w := &failing{ResponseRecorder: *httptest.NewRecorder(), left: 20}
	sse := wire.StartSSE(w)
	if err := sse.Data("short"); err != nil {
		t.Fatal(err)
	}
	if err := sse.Event("1", "long", strings.Repeat("x", 40)); err == nil {
		t.Fatal("a write past the failure succeeded")
	}
	w.left = 1 << 20
	if sse.Comment("keep-alive") == nil || sse.Data("more") == nil || w.Body.String() != "data: short\n\n" {
		t.Fatalf("writes after the failure: %q", w.Body.String())
	}
}

// locked is a ResponseRecorder safe to read while the keep-alive goroutine writes to it.
type locked struct {
	mu sync.Mutex
	*httptest.ResponseRecorder
}

func (l *locked) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ResponseRecorder.Write(b)
}

func (l *locked) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ResponseRecorder.Flush()
}

func (l *locked) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Body.String()
}

// TestSSEKeepAlive: comments come while the stream is quiet, never inside an event, and none
// after stop returned.
func TestSSEKeepAlive(t *testing.T) {
	t.Parallel()
	rec := &locked{ResponseRecorder: httptest.NewRecorder()}
	sse := wire.StartSSE(rec)
	stop := sse.KeepAlive(context.Background(), time.Millisecond)
	for i := 0; i < 200; i++ {
		if err := sse.Event(wire.SeqID(int64(i+1)), "tick", strings.Repeat("y", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	poll.Eventually(t, "a keep-alive", func() bool { return strings.Contains(rec.String(), ": keep-alive\n\n") })
	stop()
	body := rec.String()
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		if block != ": keep-alive" && !strings.HasPrefix(block, "id: ") {
			t.Fatalf("a block that is neither an event nor a keep-alive: %q", block)
		}
	}
	if rec.String() != body {
		t.Fatal("written after stop returned")
	}
}
