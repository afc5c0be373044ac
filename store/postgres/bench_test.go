package postgres_test

import (
	"fmt"
	"testing"

	"github.com/carryon-hub/carryon/store/storetest"
)

func BenchmarkAppend(b *testing.B) {
	for _, history := range []int{10, 10000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			storetest.BenchAppend(b, open(b, newSchema(b)), history)
		})
	}
}

func BenchmarkLastMessages(b *testing.B) {
	for _, history := range []int{10, 10000} {
		b.Run(fmt.Sprintf("history=%d/k=20", history), func(b *testing.B) {
			storetest.BenchLastMessages(b, open(b, newSchema(b)), history, 20)
		})
	}
}
