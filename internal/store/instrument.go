package store

import (
	"context"
	"time"
)

// Observer is told how long each transaction took, by kind ("read", "replica" for a read a read
// replica answered, or "write"), and how it ended.
// A transaction cut short because its context ended (a client that went away) is reported with
// the context's error (context.Canceled or context.DeadlineExceeded), whatever the driver said.
type Observer func(kind string, d time.Duration, err error)

// Instrument returns st with every transaction timed by observe.
func Instrument(st Store, observe Observer) Store {
	return &instrumented{Store: st, observe: observe}
}

type instrumented struct {
	Store
	observe Observer
}

func (s *instrumented) Read(ctx context.Context, fn func(Tx) error) error {
	sr := StaleReadOf(ctx)
	before := sr.Replica()
	start := time.Now()
	err := s.Store.Read(ctx, fn)
	kind := "read"
	if !before && sr.Replica() {
		kind = "replica"
	}
	s.observe(kind, time.Since(start), outcome(ctx, err))
	return err
}

func (s *instrumented) Write(ctx context.Context, fn func(context.Context, Tx) error) error {
	start := time.Now()
	err := s.Store.Write(ctx, fn)
	s.observe("write", time.Since(start), outcome(ctx, err))
	return err
}

// outcome is what the observer is told of a transaction that ended with err.
func outcome(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Unwrap returns the store being timed.
func (s *instrumented) Unwrap() Store { return s.Store }
