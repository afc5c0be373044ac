package contextbuild_test

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// BenchmarkBuild builds the context of sessions of 10 to 100,000 messages over a SQLite file.
// The window is 100 messages, so all but the first read the same number of rows: the cost is
// flat in the length of the history.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			f := newFixture(b)
			id := f.session(b)
			f.chat(b, id, 1, n, 300)
			builder := contextbuild.New(contextbuild.Config{Window: 100}, f.svc, nil)
			b.ReportAllocs()
			for b.Loop() {
				c, err := builder.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
				if err != nil {
					b.Fatal(err)
				}
				if c.LastSeq != int64(n) || len(c.Messages) != min(n, 100) {
					b.Fatalf("context has %d messages up to seq %d", len(c.Messages), c.LastSeq)
				}
			}
		})
	}
}

// BenchmarkBuildForkChain builds the context at the end of a fork chain of depth 1 and 1,000
// (each fork of the one before with one message of its own, the root with 1,000 messages): the
// window's 100 messages come from 100 levels of the deep chain.
func BenchmarkBuildForkChain(b *testing.B) {
	for _, depth := range []int{1, 1000} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			f := newFixture(b)
			id := f.session(b)
			f.chat(b, id, 1, 1000, 300)
			for i := range depth {
				s, err := f.svc.Fork(f.alice, id, carryon.ForkInput{})
				if err != nil {
					b.Fatal(err)
				}
				id = s.ID
				f.chat(b, id, 1001+i, 1, 300)
			}
			builder := contextbuild.New(contextbuild.Config{Window: 100}, f.svc, nil)
			b.ReportAllocs()
			for b.Loop() {
				c, err := builder.Build(f.alice, id, contextbuild.Options{Model: "gpt-4o"})
				if err != nil {
					b.Fatal(err)
				}
				if c.LastSeq != int64(1000+depth) || len(c.Messages) != 100 {
					b.Fatalf("context has %d messages up to seq %d", len(c.Messages), c.LastSeq)
				}
			}
		})
	}
}
