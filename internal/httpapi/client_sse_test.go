package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// cutter is a proxy in front of the server that cuts every event stream abruptly after a number
// of whole events and half of the next one, and records the Last-Event-ID of each connection.
type cutter struct {
	backend   string
	transport http.RoundTripper // to the backend
	after     int               // whole events per connection before the cut

	mu      sync.Mutex
	streams int      // event stream connections
	resumed []string // Last-Event-ID of every event stream connection
}

func (p *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.backend+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	out.Header = r.Header.Clone()
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_, _ = io.Copy(w, resp.Body)
		return
	}
	p.mu.Lock()
	p.streams++
	p.resumed = append(p.resumed, r.Header.Get("Last-Event-ID"))
	p.mu.Unlock()
	// Pass whole events, then half of the next one, then drop the connection.
	var buf []byte
	chunk := make([]byte, 4096)
	sent := 0
	for {
		n, err := resp.Body.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := bytes.Index(buf, []byte("\n\n"))
			if i < 0 {
				break
			}
			frame := buf[:i+2]
			buf = buf[i+2:]
			if bytes.HasPrefix(frame, []byte(":")) {
				continue
			}
			if sent == p.after {
				_, _ = w.Write(frame[:len(frame)/2])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // the connection breaks mid-event
			}
			_, _ = w.Write(frame)
			w.(http.Flusher).Flush()
			sent++
		}
		if err != nil {
			return
		}
	}
}

// A stream whose connection breaks every few events reconnects with Last-Event-ID and yields
// every event once, in order, the same as an unbroken stream.
func TestClientEventsReconnect(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	direct := e.client(e.aliceKey)
	cx := ctx(t)
	p := &cutter{backend: e.srv.URL, transport: e.http.Transport, after: 3}
	proxy := httptest.NewServer(p)
	defer proxy.Close()
	c := client.New(proxy.URL, e.aliceKey)

	s, err := direct.Create(cx, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	id, st, err := c.StartStream(cx, s.ID, carryon.NewRun{Message: task})
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, st)
	wantComplete(t, got, 0)
	ref, err := direct.Events(cx, id, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	want := drain(t, ref)
	if len(got) != len(want) {
		t.Fatalf("through the proxy %d events, directly %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Type != want[i].Type || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	p.mu.Lock()
	streams, resumed := p.streams, p.resumed
	p.mu.Unlock()
	if streams < 3 {
		t.Fatalf("%d stream connections for %d events: the proxy did not cut", streams, len(want))
	}
	for i, last := range resumed {
		if wantID := fmt.Sprint(i * p.after); i > 0 && last != wantID {
			t.Fatalf("connection %d resumed after %q, want %q (all: %q)", i, last, wantID, resumed)
		}
	}

	// Events reconnects the same way, from any afterSeq.
	st2, err := c.Events(cx, id, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	wantComplete(t, drain(t, st2), 2)
}

// fakeSSE serves scripted event stream answers, one per connection, and records Last-Event-ID.
type fakeSSE struct {
	mu      sync.Mutex
	answers []string // the body of each connection in turn; the last one repeats
	hold    bool     // keep the connection open after the body
	seen    []string
	queries []string
}

func (f *fakeSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.seen = append(f.seen, r.Header.Get("Last-Event-ID"))
	f.queries = append(f.queries, r.URL.RawQuery)
	body := f.answers[min(len(f.seen), len(f.answers))-1]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, body)
	w.(http.Flusher).Flush()
	if f.hold {
		<-r.Context().Done()
	}
}

// preview is a model delta previewed before it is stored: no id, seq 0.
func preview(text string) string {
	return fmt.Sprintf("event: model.delta\ndata: {\"run_id\":\"run_x\",\"seq\":0,\"type\":\"model.delta\",\"data\":{\"text\":%q}}\n\n", text)
}

// delta is the stored copy of a model delta.
func delta(seq int64, text string) string {
	return fmt.Sprintf("id: %d\nevent: model.delta\ndata: {\"run_id\":\"run_x\",\"seq\":%d,\"type\":\"model.delta\",\"data\":{\"text\":%q}}\n\n", seq, seq, text)
}

func ev(seq int64, typ carryon.EventType) string {
	return fmt.Sprintf("id: %d\nevent: %s\ndata: {\"run_id\":\"run_x\",\"seq\":%d,\"type\":%q,\"data\":{}}\n\n", seq, typ, seq, typ)
}

// The parser skips comments, passes what the server sends as events and turns `event: error`
// into the problem's *carryon.Error; a passing error is retried after the last event.
func TestClientEventsWire(t *testing.T) {
	t.Parallel()
	notFound := "event: error\ndata: {\"type\":\"x\",\"title\":\"Not found\",\"status\":404,\"detail\":\"run run_x is gone\",\"code\":\"not_found\"}\n\n"
	internal := "event: error\ndata: {\"type\":\"x\",\"title\":\"Internal\",\"status\":500,\"detail\":\"Internal error.\",\"code\":\"internal\"}\n\n"
	cases := []struct {
		name    string
		answers []string
		types   string
		code    string
		seen    []string
	}{
		{"comments and a whole run", []string{": keepalive\n\n" + ev(1, "run.queued") + ": x\n" + ev(2, "run.finished")}, " run.queued run.finished", "", []string{""}},
		{"an error ends the stream", []string{ev(1, "run.queued") + notFound}, " run.queued", carryon.ENOTFOUND, []string{""}},
		{"a passing error is resumed", []string{ev(1, "run.queued") + internal, ev(1, "run.queued") + ev(2, "run.started") + ev(3, "run.failed")}, " run.queued run.started run.failed", "", []string{"", "1"}},
		{"a clean end before the last event is resumed", []string{ev(1, "run.queued"), ev(2, "run.finished")}, " run.queued run.finished", "", []string{"", "1"}},
		// A connection dropped in the middle of a model call: the server sends the unstored
		// previews again after the reconnect; the client yields them once, and their stored copy not at all.
		{"previews sent again after a reconnect come once", []string{preview("hi"),
			preview("hi") + preview(" there") + delta(1, "hi") + delta(2, " there") + ev(3, "run.finished")},
			" model.delta model.delta run.finished", "", []string{"", ""}},
		{"retries are bounded", []string{ev(1, "run.queued") + internal, internal}, " run.queued", carryon.EINTERNAL, []string{"", "1", "1", "1", "1", "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSSE{answers: tc.answers}
			srv := httptest.NewServer(f)
			defer srv.Close()
			st, err := client.New(srv.URL, "k", client.WithStreamRetry(5, 10*time.Millisecond)).Events(ctx(t), "run_x", 0, true)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var got []*carryon.Event
			for {
				e, ok, err := st.Next()
				if err != nil {
					if tc.code == "" {
						t.Fatalf("after%s: %v", seqs(got), err)
					}
					wantCode(t, err, tc.code)
					break
				}
				if !ok {
					if tc.code != "" {
						t.Fatalf("no %s error", tc.code)
					}
					break
				}
				got = append(got, e)
			}
			if seqs(got) != tc.types {
				t.Fatalf("events%s, want%s", seqs(got), tc.types)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if fmt.Sprint(f.seen) != fmt.Sprint(tc.seen) {
				t.Fatalf("Last-Event-ID of each connection %q, want %q", f.seen, tc.seen)
			}
		})
	}
}

// Without follow, the client asks the server for the stored events only (follow=false) and the
// stream ends when the server ends it between two events, without reconnecting; a stream cut in
// the middle of an event is resumed.
func TestClientEventsWithoutFollow(t *testing.T) {
	t.Parallel()
	cut := ev(2, "run.started")
	cases := []struct {
		name    string
		answers []string
		seen    string
	}{
		{"ended by the server", []string{ev(1, "run.queued") + ev(2, "run.started")}, "[]"},
		{"cut in an event", []string{ev(1, "run.queued") + cut[:len(cut)-3], ev(2, "run.started")}, "[ 1]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeSSE{answers: tc.answers}
			srv := httptest.NewServer(f)
			defer srv.Close()
			st, err := client.New(srv.URL, "k", client.WithStreamRetry(3, 10*time.Millisecond)).Events(ctx(t), "run_x", 0, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := seqs(drain(t, st)); got != " run.queued run.started" {
				t.Fatalf("events%s", got)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if fmt.Sprint(f.seen) != tc.seen {
				t.Fatalf("Last-Event-ID of each connection %q, want %s", f.seen, tc.seen)
			}
			for _, q := range f.queries {
				if q != "follow=false" {
					t.Fatalf("queries %q, want follow=false on each", f.queries)
				}
			}
		})
	}
}
