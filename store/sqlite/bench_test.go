package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon/internal/store/storetest"
)

// histories are the session lengths every per-session benchmark runs at.
var histories = []int{10, 1000, 10000, 100000}

func BenchmarkAppend(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			storetest.BenchAppend(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), history)
		})
	}
}

// BenchmarkAppendConcurrent is group commit's measure: durable appends at synchronous=FULL from
// 1, 16 and 64 writers at once.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			storetest.BenchAppendConcurrent(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), writers)
		})
	}
}

func BenchmarkLastMessages(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d/k=20", history), func(b *testing.B) {
			storetest.BenchLastMessages(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), history, 20)
		})
	}
}

// BenchmarkForkChain reads the last 20 messages at the end of a fork chain of depth 1 and
// 1,000 against the root, whose forks hold one message each (own) or none (empty).
func BenchmarkForkChain(b *testing.B) {
	for _, own := range []bool{true, false} {
		for _, depth := range []int{1, 1000} {
			b.Run(fmt.Sprintf("own=%v/depth=%d", own, depth), func(b *testing.B) {
				storetest.BenchForkChain(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), depth, own)
			})
		}
	}
}

// BenchmarkSessionSearch: session search (ListSessions with terms, the first page) for a user
// with 1,000 sessions of 100 messages each, or 10,000 (1,000,000 messages) with
// CARRYON_BENCH_LARGE=1; docs/BENCHMARKS.md has the figures.
func BenchmarkSessionSearch(b *testing.B) {
	sessions := 1000
	if os.Getenv("CARRYON_BENCH_LARGE") != "" {
		sessions = 10000
	}
	st := openFile(b, filepath.Join(b.TempDir(), "bench.db"))
	owner := storetest.PrefillSearch(b, st, sessions, 100)
	storetest.BenchSessionSearch(b, st, owner)
}

// BenchmarkStoredBytes is the quota's recount of a user with one session of history messages.
func BenchmarkStoredBytes(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			storetest.BenchStoredBytes(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), history)
		})
	}
}

// BenchmarkUsageDays reads a year of spend per day (docs/BENCHMARKS.md, "Usage per day").
func BenchmarkUsageDays(b *testing.B) {
	for _, op := range []string{"user", "session", "record"} {
		b.Run(op, func(b *testing.B) {
			storetest.BenchUsageDays(b, openFile(b, filepath.Join(b.TempDir(), "bench.db")), 366, op)
		})
	}
}
