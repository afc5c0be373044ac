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

// TestCPU: this process's processor time grows with work, and the report gives it an operation.
func TestCPU(t *testing.T) {
	c0, err := SelfCPU(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for c1 := c0; c1-c0 < 20*time.Millisecond; c1, _ = SelfCPU(t.Context()) {
		for i := range 1_000_000 {
			x += i
		}
	}
	rep := &Report{Scenario: Append, Ops: 99, Errors: 1}
	rep.setCPU("process", 25*time.Millisecond)
	if rep.CPU != (CPU{Source: "process", Seconds: 0.025, PerOpMicros: 250}) || x == 0 {
		t.Fatalf("cpu %+v", rep.CPU)
	}
	var w bytes.Buffer
	if err := rep.WriteText(&w); err != nil || !strings.Contains(w.String(), "cpu (process): 0.025 s, 250.0 µs an op") {
		t.Fatalf("text report (%v):\n%s", err, w.String())
	}
}
