package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Restart backoff: the first reconnect after a healthy session ends is immediate; each further
// failure in a row (a start that fails, a session that dies before a call succeeds) doubles the
// wait from restartBase up to restartMax.
const (
	restartBase = 500 * time.Millisecond
	restartMax  = 30 * time.Second
)

// errClosed is returned by a Server after Close.
var errClosed = errors.New("the MCP client is closed")

// Server is one MCP server's tools as a tool.Source. It connects on first use, reconnects (with
// backoff) after the server dies, and caches the tool list until the server says it changed. It is
// safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	client *mcp.Client
	ctx    context.Context // cancelled by Close; bounds connecting
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// listing serialises tool list refreshes (a semaphore a waiter can give up on).
	listing chan struct{}
	// slots holds a token per call in flight (MaxConcurrentCalls of them at most).
	slots chan struct{}

	invalid error // cfg's Validate error, returned by every use

	mu       sync.Mutex
	closed   bool
	live     *session // nil when not connected
	dialing  *dial    // the connection attempt in flight, if any
	failures int      // failures in a row, for the backoff
	retryAt  time.Time
	lastErr  error
	gen      uint64 // bumped on listChanged and on each new session
	tools    []tool.Tool
	toolsGen uint64
	listed   bool
}

// dial is one connection attempt; sess and err are set before done is closed.
type dial struct {
	done chan struct{}
	sess *session
	err  error
}

// New returns the server described by cfg; nothing is started until its tools are asked for or
// called. cfg should have passed Validate; if it did not, every use returns its error. log gets
// the server's stderr (debug) and its restarts (warn); nil discards.
func New(cfg Config, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("mcp_server", cfg.Name)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, ctx: ctx, cancel: cancel, listing: make(chan struct{}, 1),
		slots: make(chan struct{}, cfg.maxConcurrentCalls())}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "carryon", Version: "1"}, &mcp.ClientOptions{
		Logger: log,
		// carryon offers the server nothing (no roots, sampling or elicitation).
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.listChanged() },
	})
	s.invalid = cfg.Validate()
	return s
}

// Name returns the server's name, the prefix of its tools' names.
func (s *Server) Name() string { return s.cfg.Name }

// Close ends the session (a stdio server is asked to exit, then killed) and makes every later use
// fail. It waits for the server's goroutines and is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	live := s.live
	s.live = nil
	s.mu.Unlock()
	s.cancel()
	if live != nil {
		live.close(false)
	}
	s.wg.Wait()
	return nil
}

func (s *Server) listChanged() {
	s.mu.Lock()
	s.gen++
	s.mu.Unlock()
	s.log.Debug("mcp server says its tool list changed")
}

// session returns the live session, connecting when there is none. A reconnect waits out the
// backoff when ctx allows it, and fails at once when it does not.
func (s *Server) session(ctx context.Context) (*session, error) {
	if s.invalid != nil {
		return nil, s.invalid
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, fmt.Errorf("MCP server %q: %w", s.cfg.Name, errClosed)
		}
		if s.live != nil {
			live, probe := s.live, s.live.probe
			s.mu.Unlock()
			if probe == nil {
				return live, nil
			}
			// A call went unanswered: wait for the ping that tells whether the server is
			// still there, rather than send it a call it may never answer.
			select {
			case <-probe:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		d := s.dialing
		if d == nil {
			if wait := time.Until(s.retryAt); wait > 0 {
				lastErr := s.lastErr
				s.mu.Unlock()
				if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
					return nil, fmt.Errorf("MCP server %q is restarting (next try in %s) after: %w",
						s.cfg.Name, wait.Round(time.Millisecond), lastErr)
				}
				timer := time.NewTimer(wait)
				select {
				case <-timer.C:
					continue
				case <-ctx.Done():
					timer.Stop()
					return nil, context.Cause(ctx)
				}
			}
			d = &dial{done: make(chan struct{})}
			s.dialing = d
			s.wg.Add(1)
			go s.connect(d)
		}
		s.mu.Unlock()
		select {
		case <-d.done:
			return d.sess, d.err
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// connect makes the connection attempt d, on its own context so that the caller that started it
// giving up does not fail the others waiting for it.
func (s *Server) connect(d *dial) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.connectTimeout())
	sess, err := s.open(ctx)
	cancel()
	s.mu.Lock()
	if err == nil && s.closed {
		s.mu.Unlock()
		sess.close(false)
		s.mu.Lock()
		err = errClosed
	}
	if err != nil {
		s.failed(err)
		s.log.Warn("mcp server did not start", "error", err, "failures", s.failures)
	} else {
		s.live = sess
		s.gen++
		s.wg.Add(1)
		go s.watch(sess)
	}
	d.sess, d.err = sess, err
	if err != nil {
		d.sess = nil
	}
	s.dialing = nil
	close(d.done)
	s.mu.Unlock()
}

// failed counts a failure and sets when the next connection may be tried; s.mu is held.
func (s *Server) failed(err error) {
	s.failures++
	s.lastErr = err
	s.retryAt = time.Now().Add(backoff(s.failures))
}

// backoff is the wait before the next connection after failures failures in a row.
func backoff(failures int) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := restartBase
	for i := 2; i < failures && d < restartMax; i++ {
		d *= 2
	}
	return min(d, restartMax)
}

// watch waits for sess to end (the server exited or closed the connection) and lets the next use
// reconnect.
func (s *Server) watch(sess *session) {
	defer s.wg.Done()
	err := sess.cs.Wait()
	if err == nil {
		err = errors.New("the server closed the connection")
	}
	s.end(sess, err)
}

// end forgets sess, if it is still the live session, as failed with err, ends the calls on it
// with err as their cause, and closes it in the background (Close waits for that), so that a
// failing call returns at once. A server that stopped answering (an *unresponsiveError) is
// killed rather than asked to exit.
func (s *Server) end(sess *session, err error) {
	sess.stop(err)
	var deaf *unresponsiveError
	kill := errors.As(err, &deaf)
	s.mu.Lock()
	if s.live == sess {
		s.live = nil
		s.failed(fmt.Errorf("%w%s", err, sess.stderr.note()))
		s.log.Warn("mcp server connection ended; the next use reconnects", "error", err,
			"retry_in", time.Until(s.retryAt).Round(time.Millisecond))
	}
	background := !s.closed // after Close has started waiting, no goroutine may be added
	if background {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if !background {
		sess.close(kill)
		return
	}
	go func() {
		defer s.wg.Done()
		sess.close(kill)
	}()
}

// acquire takes one of the server's call slots, waiting while ctx allows; release gives it back.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// answered resets the backoff and the count of timeouts after a call that sess answered.
func (s *Server) answered(sess *session) {
	s.mu.Lock()
	s.failures = 0
	sess.timeouts = 0
	s.mu.Unlock()
}

// Tools returns the server's tools, connecting first if needed. The list is cached until the
// server sends notifications/tools/list_changed or a new session starts; when a refresh fails
// and an earlier list exists, that list is returned (its calls reconnect on their own).
func (s *Server) Tools(ctx context.Context) ([]tool.Tool, error) {
	if tools, ok := s.cached(); ok {
		return tools, nil
	}
	select {
	case s.listing <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-s.listing }()
	if tools, ok := s.cached(); ok { // listed by the refresh this one waited for
		return tools, nil
	}
	lctx, cancel := context.WithTimeoutCause(ctx, s.cfg.callTimeout(), errTimedOut)
	defer cancel()
	tools, gen, err := s.refresh(lctx)
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if err != nil && context.Cause(lctx) == errTimedOut {
		err = fmt.Errorf("MCP server %q did not list its tools within %s", s.cfg.Name, s.cfg.callTimeout())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.listed && !s.closed {
			s.log.Warn("mcp server tool list not refreshed; the last one is used", "error", err)
			return slices.Clone(s.tools), nil
		}
		if _, ok := carryon.AsError(err); ok {
			return nil, err
		}
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "%v", err)
	}
	if !s.listed || gen >= s.toolsGen {
		s.tools, s.toolsGen, s.listed = tools, gen, true
	}
	return slices.Clone(s.tools), nil
}

// cached returns the cached list when it is current.
func (s *Server) cached() ([]tool.Tool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed && s.toolsGen == s.gen && !s.closed {
		return slices.Clone(s.tools), true
	}
	return nil, false
}

// refresh lists the tools anew and returns them with the generation they were listed at.
func (s *Server) refresh(ctx context.Context) ([]tool.Tool, uint64, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer context.AfterFunc(sess.ctx, func() { stop(context.Cause(sess.ctx)) })()
	lctx, span := telemetry.StartMCP(sctx, "tools/list", "", s.cfg.transportName(), s.cfg.host(), nil)
	listed, err := await(lctx, func(ctx context.Context) ([]*mcp.Tool, error) { return listAll(ctx, sess.cs) })
	span.End(err, false)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			s.unanswered(sess, context.Cause(ctx) == errTimedOut)
		case sctx.Err() == nil && !isServerError(err):
			s.end(sess, err)
		}
		return nil, 0, fmt.Errorf("MCP server %q: listing its tools: %w", s.cfg.Name, err)
	}
	return s.build(listed), gen, nil
}
