package postgres_test

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon/internal/store/storetest"
)

// histories are the session lengths every per-session benchmark runs at.
var histories = []int{10, 1000, 10000, 100000}

func BenchmarkAppend(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			storetest.BenchAppend(b, open(b, newSchema(b)), history)
		})
	}
}

// BenchmarkAppendConcurrent: appends from 1, 16 and 64 writers at once (PostgreSQL commits each
// in its own transaction; its WAL flush already serves concurrent commits together).
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			storetest.BenchAppendConcurrent(b, open(b, newSchema(b)), writers)
		})
	}
}

func BenchmarkLastMessages(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d/k=20", history), func(b *testing.B) {
			storetest.BenchLastMessages(b, open(b, newSchema(b)), history, 20)
		})
	}
}

// BenchmarkForkChain: the last 20 messages at the end of a fork chain of depth 1 and 1,000, against the root.
func BenchmarkForkChain(b *testing.B) {
	for _, own := range []bool{true, false} {
		for _, depth := range []int{1, 1000} {
			b.Run(fmt.Sprintf("own=%v/depth=%d", own, depth), func(b *testing.B) {
				storetest.BenchForkChain(b, open(b, newSchema(b)), depth, own)
			})
		}
	}
}

// BenchmarkStoredBytes is the quota's recount of a user with one session of history messages.
func BenchmarkStoredBytes(b *testing.B) {
	for _, history := range histories {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			storetest.BenchStoredBytes(b, open(b, newSchema(b)), history)
		})
	}
}
