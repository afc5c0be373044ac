package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLatencyOf: nearest-rank percentiles of 1..100 ms, whatever the order they came in.
func TestLatencyOf(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	got := latencyOf(ds)
	want := Latency{N: 100, Mean: 50.5, P50: 50, P95: 95, P99: 99, Max: 100}
	if got != want {
		t.Fatalf("latencyOf(1..100 ms) = %+v, want %+v", got, want)
	}
	if one := latencyOf([]time.Duration{3 * time.Millisecond}); one.P50 != 3 || one.P99 != 3 || one.Max != 3 {
		t.Fatalf("one latency: %+v", one)
	}
}

// TestBar: the bar shows the phase, the share done and the errors, and clears its line when done.
func TestBar(t *testing.T) {
	var w bytes.Buffer
	progress, done := Bar(&w)
	progress(Progress{Phase: "turn", Done: 50, Total: 100, Elapsed: time.Second, Errors: 2})
	if s := w.String(); !strings.Contains(s, "turn") || !strings.Contains(s, " 50% 50/100 50/s") || !strings.Contains(s, "2 errors") {
		t.Fatalf("bar: %q", s)
	}
	w.Reset()
	done()
	if w.String() != "\r\033[K" {
		t.Fatalf("done wrote %q", w.String())
	}
}
