package store

import (
	"context"
	"time"
)

// Observer is told how long each transaction took, by kind ("read" or "write").
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
	start := time.Now()
	err := s.Store.Read(ctx, fn)
	s.observe("read", time.Since(start), err)
	return err
}

func (s *instrumented) Write(ctx context.Context, fn func(Tx) error) error {
	start := time.Now()
	err := s.Store.Write(ctx, fn)
	s.observe("write", time.Since(start), err)
	return err
}

// Unwrap returns the store being timed.
func (s *instrumented) Unwrap() Store { return s.Store }
