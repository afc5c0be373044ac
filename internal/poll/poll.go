// Package poll is the tests' one way to wait for something that happens on its own time: check a
// condition every few milliseconds until it holds or a deadline passes. Tests poll with it instead
// of sleeping for a guessed time.
package poll

import (
	"testing"
	"time"
)

// Within checks cond every 10 ms until it holds (true) or d has passed (false).
func Within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// Eventually fails t unless cond holds within 30 s.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Within(30*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}
