package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

const mediaEventStream = "text/event-stream"

// How an event stream recovers from a dropped connection by default: up to 6 reconnects in a
// row without an event in between, waiting 100ms, then twice as long each time, at most
// streamMaxBackoff (about 5s in all: long enough to ride out a server restart). An event that
// arrives resets the count. WithStreamRetry changes them.
const (
	defaultStreamRetries = 6
	defaultStreamBackoff = 100 * time.Millisecond
	streamMaxBackoff     = 2 * time.Second
)

// WithStreamRetry sets how many times in a row an event stream reconnects after its connection
// dropped (0: never) and the first wait, which doubles each time up to 2s.
func WithStreamRetry(retries int, backoff time.Duration) Option {
	return func(c *Client) { c.streamRetries, c.streamBackoff = retries, backoff }
}

// sseStream reads a run's events from a Server-Sent Events answer and reconnects with
// Last-Event-ID when the connection ends before the run's last event.
type sseStream struct {
	c      *Client
	ctx    context.Context
	runID  string
	follow bool
	// last is the seq of the last event yielded (or the afterSeq the stream started from).
	last int64
	// previewed holds the data of the model deltas yielded as previews (no id, Seq 0) whose stored
	// copies have not come yet: a stored copy is skipped, so a stream that reconnects in the
	// middle of a model call yields its text once.
	previewed []json.RawMessage
	// resent counts the previews of this connection that were previewed already on an earlier
	// one: after a reconnect the server sends the unstored previews again, and they are not
	// yielded twice.
	resent int

	body     io.ReadCloser
	rd       *bufio.Reader
	cancel   context.CancelFunc // ends the current connection
	failures int
	cause    error // why the last connection ended
	done     bool
	err      error
}

// frame is one parsed SSE event.
type frame struct {
	id, event string
	data      strings.Builder
}

// connect opens GET /v1/runs/{id}/events after the last event.
func (st *sseStream) connect() error {
	// A receipt in the caller's context belongs to the request that started the run, not to this.
	ctx, cancel := context.WithCancel(carryon.NewContextWithReceipt(st.ctx, nil))
	var q url.Values
	if !st.follow {
		q = url.Values{"follow": {"false"}} // the server ends the stream after the stored events
	}
	resp, err := st.c.send(ctx, call{method: "GET", path: runPath(st.runID) + "/events", query: q, lastEventID: st.last}, mediaEventStream)
	if err != nil {
		cancel()
		return err
	}
	st.cancel, st.resent = cancel, 0
	st.attach(resp)
	return nil
}

// attach reads events from resp, whose body the stream now owns.
func (st *sseStream) attach(resp *http.Response) {
	st.body, st.rd = resp.Body, bufio.NewReader(resp.Body)
}

// drop closes the current connection.
func (st *sseStream) drop() {
	if st.body != nil {
		st.body.Close()
		st.body, st.rd = nil, nil
	}
	if st.cancel != nil {
		st.cancel()
		st.cancel = nil
	}
}

// Next returns the next event of the run; (nil, false, nil) after the run's last event.
func (st *sseStream) Next() (*carryon.Event, bool, error) {
	for {
		if st.err != nil {
			return nil, false, st.err
		}
		if st.done {
			return nil, false, nil
		}
		if st.body == nil {
			if err := st.reconnect(); err != nil {
				st.fail(err)
				continue
			}
		}
		f, err := st.read()
		if err != nil {
			st.drop()
			st.cause = err
			switch {
			case st.ctx.Err() != nil:
				st.fail(st.ctx.Err())
			case err == io.EOF && !st.follow:
				st.done = true // without follow the server ends the stream after the stored events
			}
			continue // else the connection dropped: reconnect after the last event
		}
		if f.event == "error" {
			perr := problemError(f.data.String())
			if c := perr.Code; c == carryon.EINTERNAL || c == carryon.EUNAVAILABLE {
				st.drop() // perhaps passing (the server is stopping): resume, boundedly
				st.cause = perr
				continue
			}
			st.fail(perr)
			continue
		}
		e, ok, err := st.event(f)
		if err != nil {
			st.fail(err)
			continue
		}
		if !ok {
			continue // an event already yielded, sent again after a reconnect
		}
		st.failures = 0
		if e.Seq == 0 {
			if st.resent < len(st.previewed) && bytes.Equal(e.Data, st.previewed[st.resent]) {
				st.resent++ // yielded before the reconnect
				continue
			}
			st.previewed, st.resent = append(st.previewed[:st.resent:st.resent], e.Data), st.resent+1
			return e, true, nil
		}
		st.last = e.Seq
		if len(st.previewed) > 0 {
			if e.Type == carryon.EventModelDelta && bytes.Equal(e.Data, st.previewed[0]) {
				st.previewed, st.resent = st.previewed[1:], max(st.resent-1, 0)
				continue
			}
			st.previewed, st.resent = nil, 0
		}
		if e.Type == carryon.EventRunFinished || e.Type == carryon.EventRunFailed {
			st.done = true
			st.drop()
		}
		return e, true, nil
	}
}

// fail ends the stream with err.
func (st *sseStream) fail(err error) {
	st.drop()
	st.err = err
}

// reconnect waits a backoff and connects again after the last event. Answers that will not change
// on a retry (the run is missing, the key is wrong) end the stream at once.
func (st *sseStream) reconnect() error {
	for {
		st.failures++
		if st.failures > st.c.streamRetries {
			if e, ok := carryon.AsError(st.cause); ok {
				return e
			}
			return fmt.Errorf("carryon client: the event stream of run %s broke %d times in a row after event %d: %w", st.runID, st.c.streamRetries, st.last, st.cause)
		}
		wait := st.c.streamBackoff << (st.failures - 1)
		if wait > streamMaxBackoff || wait <= 0 {
			wait = streamMaxBackoff
		}
		t := time.NewTimer(wait)
		select {
		case <-st.ctx.Done():
			t.Stop()
			return st.ctx.Err()
		case <-t.C:
		}
		err := st.connect()
		if err == nil {
			return nil
		}
		st.cause = err
		if e, ok := carryon.AsError(err); ok && e.Code != carryon.EINTERNAL && e.Code != carryon.EUNAVAILABLE {
			return err
		}
		if st.ctx.Err() != nil {
			return st.ctx.Err()
		}
	}
}

// read reads one event (skipping comments and empty frames) from the connection.
func (st *sseStream) read() (*frame, error) {
	f := &frame{}
	seen := false
	for {
		line, err := st.rd.ReadString('\n')
		if err != nil {
			if err == io.EOF && (seen || line != "") {
				err = io.ErrUnexpectedEOF // cut in the middle of an event
			}
			return nil, err // io.EOF: the server ended the stream between two events
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen && (f.data.Len() > 0 || f.event == "error") {
				return f, nil
			}
			f, seen = &frame{}, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: keepalive
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "id":
			f.id, seen = value, true
		case "event":
			f.event, seen = value, true
		case "data":
			if f.data.Len() > 0 {
				f.data.WriteByte('\n')
			}
			f.data.WriteString(value)
			seen = true
		}
	}
}

// event decodes a frame into an event; ok is false for an event at or before the last one.
func (st *sseStream) event(f *frame) (*carryon.Event, bool, error) {
	var e carryon.Event
	if err := json.Unmarshal([]byte(f.data.String()), &e); err != nil {
		return nil, false, fmt.Errorf("carryon client: event %q of run %s is not JSON: %w", f.id, st.runID, err)
	}
	if e.Seq == 0 && f.id != "" {
		e.Seq, _ = strconv.ParseInt(f.id, 10, 64)
	}
	if e.Type == "" {
		e.Type = carryon.EventType(f.event)
	}
	if e.RunID == "" {
		e.RunID = st.runID
	}
	if f.id == "" && e.Seq == 0 {
		return &e, true, nil // a model delta previewed before it is stored
	}
	if e.Seq <= st.last {
		return nil, false, nil
	}
	return &e, true, nil
}

// problemError turns the data of an `event: error` into a *carryon.Error.
func problemError(data string) *carryon.Error {
	var p wire.Problem
	if err := json.Unmarshal([]byte(data), &p); err != nil || p.Code == "" {
		return carryon.Errorf(carryon.EINTERNAL, "the event stream ended with an error the client cannot read: %.200s", data)
	}
	e := &carryon.Error{Code: p.Code, Message: p.Detail, ActiveRunID: p.ActiveRunID}
	if p.CurrentVersion != nil {
		e.CurrentVersion = *p.CurrentVersion
	}
	return e
}

// Close ends the stream and its connection.
func (st *sseStream) Close() error {
	st.drop()
	st.done = true
	return nil
}
