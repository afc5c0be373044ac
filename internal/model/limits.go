package model

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"
)

// Limits bound each call of a Provider from WithLimits. A zero field sets no bound.
type Limits struct {
	// FirstByte is the longest wait from sending the request to the first sign of an answer: its
	// response headers or an event of its stream when the provider reports them (Progress),
	// else its first chunk.
	FirstByte time.Duration
	// Idle is the longest silence between two signs of the answer once it began. The time the
	// consumer spends on a chunk it was given does not count.
	Idle time.Duration
	// Total is the longest a call may take, from sending the request to its last chunk.
	Total time.Duration
	// MaxOutputBytes bounds what the model writes in one call, in bytes: its text and its tool
	// calls' arguments, counted as they arrive.
	MaxOutputBytes int
}

// WithLimits returns a Provider that ends each call of p that breaks one of lim's bounds with an
// *Error: CodeTimeout (retryable) when it goes past FirstByte, Idle or Total, CodeOutputLimit
// (not retryable) when its output goes past MaxOutputBytes. The bounds hold for every provider:
// they are kept on the chunks p yields and on what p reports with Progress, and a breach cancels
// the context p was given, which p must honour (every provider of carryon does). Under WithRetry
// each attempt has the bounds to itself: WithRetry(WithLimits(p, lim), policy).
func WithLimits(p Provider, lim Limits) Provider {
	return &limited{p: p, lim: lim}
}

// Progress tells the limits around the call ctx belongs to (WithLimits) that the answer is
// arriving: its response headers came (n is 0), or an event of its stream came carrying n bytes
// of the model's output (text or tool-call arguments, yielded already or not). A provider calls
// it as it reads, so that an answer that is alive but has yielded nothing yet (a tool call is
// assembled before it is yielded) neither looks silent nor escapes the output bound. Outside
// WithLimits it does nothing.
func Progress(ctx context.Context, n int) {
	for w, _ := ctx.Value(watchKey{}).(*watch); w != nil; w = w.parent {
		w.progress(n)
	}
}

// limited is the Provider WithLimits returns.
type limited struct {
	p   Provider
	lim Limits
}

// Name returns the wrapped provider's name.
func (l *limited) Name() string { return l.p.Name() }

// Stream runs one call of the wrapped provider under the limits.
func (l *limited) Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		callCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		w := &watch{lim: l.lim, name: l.p.Name(), cancel: cancel}
		w.parent, _ = ctx.Value(watchKey{}).(*watch)
		callCtx = context.WithValue(callCtx, watchKey{}, w)
		w.start()
		defer w.stop()
		for c, err := range l.p.Stream(callCtx, req) {
			if err != nil {
				if e := w.breach(ctx, callCtx); e != nil {
					err = e
				}
				yield(Chunk{}, err)
				return
			}
			w.chunk(c)
			if callCtx.Err() != nil { // a breach, or the caller gave up: a chunk may not pass
				var err error = TransportError(ctx, l.p.Name(), context.Cause(callCtx), true)
				if e := w.breach(ctx, callCtx); e != nil {
					err = e
				}
				yield(Chunk{}, err)
				return
			}
			w.pause()
			if !yield(c, nil) {
				return
			}
			w.resume()
		}
	}
}

// watchKey is the context key of the watch of a call, for Progress.
type watchKey struct{}

// watch keeps the limits of one call. Its timers cancel the call's context with the *Error of
// the breach as the cause; the first breach wins.
type watch struct {
	lim    Limits
	name   string
	cancel context.CancelCauseFunc
	parent *watch

	mu sync.Mutex
	// quiet fires when the answer is silent too long: FirstByte until it began, then Idle.
	quiet, total *time.Timer
	began        bool
	// reported is the output Progress counted, yielded that of the chunks; the larger is the
	// call's output (a provider that reports counts what it yields too).
	reported, yielded int
}

// start arms the first-byte and total timers.
func (w *watch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lim.FirstByte > 0 {
		w.quiet = time.AfterFunc(w.lim.FirstByte, func() {
			w.fail(CodeTimeout, fmt.Sprintf("no answer within %s of the request (first-byte timeout)", w.lim.FirstByte))
		})
	}
	if w.lim.Total > 0 {
		w.total = time.AfterFunc(w.lim.Total, func() {
			w.fail(CodeTimeout, fmt.Sprintf("the call took longer than %s (total timeout)", w.lim.Total))
		})
	}
}

// stop disarms the timers when the call is over.
func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.quiet != nil {
		w.quiet.Stop()
	}
	if w.total != nil {
		w.total.Stop()
	}
}

// fail cancels the call with the breach as its cause.
func (w *watch) fail(code, msg string) {
	e := &Error{Provider: w.name, Code: code, Message: msg}
	if code == CodeTimeout {
		e.Retryable, e.Err = true, context.DeadlineExceeded
	}
	w.cancel(e)
}

// alive records a sign of the answer: the first ends the first-byte wait, each one restarts
// the idle wait. The caller holds mu.
func (w *watch) alive() {
	if !w.began {
		w.began = true
		if w.quiet != nil {
			w.quiet.Stop()
			w.quiet = nil
		}
	}
	if w.lim.Idle <= 0 {
		return
	}
	if w.quiet == nil {
		w.quiet = time.AfterFunc(w.lim.Idle, func() {
			w.fail(CodeTimeout, fmt.Sprintf("the answer stopped: nothing came for %s (idle timeout)", w.lim.Idle))
		})
		return
	}
	w.quiet.Reset(w.lim.Idle)
}

// progress is Progress for this call.
func (w *watch) progress(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.alive()
	w.reported += max(n, 0)
	w.checkOutput()
}

// chunk records a chunk the provider yielded.
func (w *watch) chunk(c Chunk) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.alive()
	w.yielded += len(c.Delta)
	for _, tc := range c.ToolCalls {
		w.yielded += len(tc.Arguments)
	}
	w.checkOutput()
}

// checkOutput fails the call when its output went past the bound. The caller holds mu.
func (w *watch) checkOutput() {
	if w.lim.MaxOutputBytes > 0 && max(w.reported, w.yielded) > w.lim.MaxOutputBytes {
		w.fail(CodeOutputLimit, fmt.Sprintf("the answer went past %d bytes (output limit)", w.lim.MaxOutputBytes))
	}
}

// pause stops the idle wait while the consumer has a chunk: a slow consumer is not a silent model.
func (w *watch) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.began && w.quiet != nil {
		w.quiet.Stop()
	}
}

// resume restarts the idle wait when the consumer asks for the next chunk.
func (w *watch) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.began && w.quiet != nil {
		w.quiet.Reset(w.lim.Idle)
	}
}

// breach returns the *Error of the limit the call broke, or nil when it broke none or when the
// caller's own context ended (then the caller's error is the answer).
func (w *watch) breach(parent, call context.Context) *Error {
	if parent.Err() != nil || call.Err() == nil {
		return nil
	}
	e, _ := context.Cause(call).(*Error)
	return e
}
