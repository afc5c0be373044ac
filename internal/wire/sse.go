package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MediaSSE is the media type of a Server-Sent Events stream.
const MediaSSE = "text/event-stream"

// KeepAliveEvery is how often a quiet stream gets a keep-alive comment.
const KeepAliveEvery = 15 * time.Second

// SSE writes one Server-Sent Events answer, for every front door that streams: each event is
// written whole and flushed at once, and writes are serialised, so the keep-alive comments of
// KeepAlive never split an event. After a failed write every later one fails too.
type SSE struct {
	mu  sync.Mutex
	w   io.Writer
	rc  *http.ResponseController
	err error
}

// StartSSE answers 200 with a Server-Sent Events stream on w: the media type, no caching and no
// buffering by proxies (X-Accel-Buffering), after the headers the caller set already.
func StartSSE(w http.ResponseWriter) *SSE {
	h := w.Header()
	h.Set("Content-Type", MediaSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &SSE{w: w, rc: http.NewResponseController(w)}
}

// Flush sends what the server buffered (the headers, before the first event).
func (s *SSE) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

// Event writes one event: its id (omitted when empty: a client that resumes with Last-Event-ID
// resumes after the last event that had one), its type (omitted when empty: "message") and data,
// which is JSON-encoded unless it is already a []byte or json.RawMessage.
func (s *SSE) Event(id, event string, data any) error {
	var b []byte
	switch d := data.(type) {
	case []byte:
		b = d
	case json.RawMessage:
		b = d
	default:
		var err error
		if b, err = json.Marshal(data); err != nil {
			return err
		}
	}
	buf := make([]byte, 0, len(b)+len(id)+len(event)+24)
	if id != "" {
		buf = append(append(append(buf, "id: "...), id...), '\n')
	}
	if event != "" {
		buf = append(append(append(buf, "event: "...), event...), '\n')
	}
	buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
	return s.write(buf)
}

// SeqID is an event id made of a sequence number.
func SeqID(seq int64) string { return strconv.FormatInt(seq, 10) }

// Comment writes a comment line, which clients ignore: a keep-alive.
func (s *SSE) Comment(text string) error { return s.write([]byte(": " + text + "\n\n")) }

// Data writes a line of its own, as some protocols end their streams ("data: [DONE]").
func (s *SSE) Data(text string) error { return s.write([]byte("data: " + text + "\n\n")) }

// KeepAlive writes a keep-alive comment every interval until ctx ends or the returned stop is
// called (stop waits for the writer to be done, so nothing is written after it returns). While a
// run is quiet (a long model call) proxies keep the connection and a client that left is seen.
func (s *SSE) KeepAlive(ctx context.Context, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s.Comment("keep-alive") != nil {
					return
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (s *SSE) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = fmt.Errorf("sse: %w", err)
		return s.err
	}
	return s.flushLocked()
}

func (s *SSE) flushLocked() error {
	if s.err != nil {
		return s.err
	}
	if err := s.rc.Flush(); err != nil {
		s.err = fmt.Errorf("sse: %w", err)
	}
	return s.err
}
