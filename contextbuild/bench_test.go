package contextbuild_test

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon/contextbuild"
)

// BenchmarkBuild builds the context of sessions of 100 and 10,000 messages over a SQLite file.
// The window is 100 messages, so both read the same number of rows: the cost is flat in the
// length of the history.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{100, 10000} {
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
				if c.LastSeq != int64(n) || len(c.Messages) != 100 {
					b.Fatalf("context has %d messages up to seq %d", len(c.Messages), c.LastSeq)
				}
			}
		})
	}
}
