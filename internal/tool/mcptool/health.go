package mcptool

import (
	"context"
	"fmt"
	"time"
)

// A server that leaves a call unanswered (its timeout ran out, or its caller gave up) may be
// wedged: a stdio server is one process, and many handle one request at a time, so every later
// call from every run would wait for it too. After such a call the server is pinged; one that
// does not answer within pingTimeout, or whose calls time out restartAfterTimeouts times in a row
// with no answer between, is killed and started again. Its calls in flight fail at once as
// restarted (the engine's journal settles them by their tools' effect classes), and the calls
// that arrive while the ping is out wait for its verdict (within their own timeouts), then go to
// the live or the new process. A streamable HTTP server is not restarted: its calls are separate
// requests, and a new session would not unstick a request the server is working on.
const (
	maxPingTimeout       = 5 * time.Second
	minPingTimeout       = 250 * time.Millisecond
	restartAfterTimeouts = 3
)

// pingTimeout is how long a server has to answer the ping after an unanswered call: a quarter of
// the call timeout, between 250 ms and 5 s, so that a call that waits for the verdict still has
// most of its own time for a restart.
func (c Config) pingTimeout() time.Duration {
	return min(maxPingTimeout, max(minPingTimeout, c.callTimeout()/4))
}

// unresponsiveError is why a session was ended for not answering; the calls in flight on it end
// with it as their cause.
type unresponsiveError struct{ reason string }

func (e *unresponsiveError) Error() string { return "the server stopped answering: " + e.reason }

// unanswered is told that a call or a listing on sess returned without the server's answer:
// timedOut when its own timeout ran out, otherwise its caller gave up. It counts the timeouts in a
// row, restarts the server after restartAfterTimeouts of them, and otherwise pings it (one ping at
// a time).
func (s *Server) unanswered(sess *session, timedOut bool) {
	if s.cfg.URL != "" {
		return
	}
	s.mu.Lock()
	if s.closed || s.live != sess {
		s.mu.Unlock()
		return
	}
	if timedOut {
		sess.timeouts++
	}
	if n := sess.timeouts; n >= restartAfterTimeouts {
		s.mu.Unlock()
		s.end(sess, &unresponsiveError{reason: fmt.Sprintf("%d calls in a row timed out", n)})
		return
	}
	if sess.probe != nil {
		s.mu.Unlock()
		return
	}
	probe := make(chan struct{})
	sess.probe = probe
	s.wg.Add(1) // under s.mu, with s.closed false: Close has not started waiting
	s.mu.Unlock()
	go s.ping(sess, probe)
}

// ping checks that sess still answers, restarts the server when it does not, and then closes probe.
func (s *Server) ping(sess *session, probe chan struct{}) {
	defer s.wg.Done()
	bound := s.cfg.pingTimeout()
	ctx, cancel := context.WithTimeout(sess.ctx, bound)
	_, err := await(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, sess.cs.Ping(ctx, nil) })
	cancel()
	switch {
	case err == nil, isServerError(err): // an answer, even "no such method", is an answer
	case sess.ctx.Err() != nil: // the session ended meanwhile
	case ctx.Err() != nil:
		s.end(sess, &unresponsiveError{reason: fmt.Sprintf("after a call went unanswered it did not answer a ping within %s", bound)})
	default:
		s.end(sess, &unresponsiveError{reason: fmt.Sprintf("after a call went unanswered a ping failed: %v", err)})
	}
	s.mu.Lock()
	sess.probe = nil
	s.mu.Unlock()
	close(probe)
}

// await runs f in a goroutine and returns what it returns, or the cause of ctx as soon as ctx
// ends. The SDK gives up on a request when its context ends, but not while writing it: a write
// to a server that has stopped reading its stdin blocks until the pipe drains, past any context,
// and no caller may wait for that. Such an f ends when the session is closed.
func await[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := f(ctx)
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-ctx.Done():
		select {
		case o := <-done: // an answer that came at the same moment wins
			return o.v, o.err
		default:
		}
		var zero T
		return zero, context.Cause(ctx)
	}
}
