package openapicheck

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Transport returns a RoundTripper that sends requests with base (http.DefaultTransport when nil)
// and checks every answer, reporting each failed check, with its request, to report. The answer is handed on
// unchanged: a body is read whole to be checked and then given back to be read again, except an
// event stream, which is checked event by event as the caller reads it.
func (c *Checker) Transport(base http.RoundTripper, report func(*http.Request, error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, base: base, report: report}
}

type transport struct {
	c      *Checker
	base   http.RoundTripper
	report func(*http.Request, error)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	method, path := req.Method, req.URL.EscapedPath()
	if mediaType(resp.Header) == "text/event-stream" && method != http.MethodHead {
		t.stream(req, resp)
		return resp, nil
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	if rerr != nil {
		// A cut answer: hand on what came and the error; there is no whole body to check.
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{rerr}))
		return resp, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := t.c.Check(Answer{Method: method, Path: path, Status: resp.StatusCode, Header: resp.Header, Body: body}); err != nil {
		t.report(req, err)
	}
	return resp, nil
}

// stream checks the status and headers of an event stream now, and wraps its body to check each
// event as it is read.
func (t *transport) stream(req *http.Request, resp *http.Response) {
	ptr, route, err := t.c.response(req.Method, req.URL.EscapedPath(), resp.StatusCode, resp.Header)
	if err == nil {
		ptr += "/content/" + escape("text/event-stream") + "/x-event-schema"
		if _, err = t.c.node(ptr); err != nil {
			err = fmt.Errorf("an event stream where the response declares no text/event-stream with an x-event-schema")
		}
	}
	if err != nil {
		t.report(req, &Error{Route: route, Status: resp.StatusCode, Err: err})
		return
	}
	resp.Body = &eventChecker{ReadCloser: resp.Body, c: t.c, ptr: ptr, route: route, status: resp.StatusCode,
		report: func(err error) { t.report(req, err) }}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// eventChecker parses the Server-Sent Events passing through it and checks each complete one,
// as {id, event, data} with data decoded from JSON, against the schema at ptr.
type eventChecker struct {
	io.ReadCloser
	c      *Checker
	ptr    string
	route  string
	status int
	report func(error)

	line  []byte // the incomplete last line
	id    *string
	event *string
	data  []string
}

func (e *eventChecker) Read(p []byte) (int, error) {
	n, err := e.ReadCloser.Read(p)
	e.line = append(e.line, p[:n]...)
	for {
		i := bytes.IndexByte(e.line, '\n')
		if i < 0 {
			break
		}
		e.field(strings.TrimSuffix(string(e.line[:i]), "\r"))
		e.line = e.line[i+1:]
	}
	return n, err
}

// field takes one line of the stream (https://html.spec.whatwg.org/multipage/server-sent-events.html).
func (e *eventChecker) field(line string) {
	if line == "" {
		e.dispatch()
		return
	}
	if strings.HasPrefix(line, ":") {
		return // a comment (keepalive)
	}
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "id":
		e.id = &value
	case "event":
		e.event = &value
	case "data":
		e.data = append(e.data, value)
	}
}

// dispatch checks the event the lines so far make up.
func (e *eventChecker) dispatch() {
	id, event, data := e.id, e.event, e.data
	e.id, e.event, e.data = nil, nil, nil
	if data == nil {
		return // no event: a stream of comments, or an id-only block
	}
	ev := map[string]any{}
	if id != nil {
		ev["id"] = *id
	}
	if event != nil {
		ev["event"] = *event
	}
	joined := strings.Join(data, "\n")
	name := "event"
	if event != nil {
		name = strconv.Quote(*event)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(joined))
	if err == nil {
		ev["data"] = v
		err = e.c.validate(e.ptr, ev)
	}
	if err != nil {
		e.report(&Error{Route: e.route, Status: e.status, Err: fmt.Errorf("%s: %w\ndata: %.2000s", name, err, joined)})
	}
}
