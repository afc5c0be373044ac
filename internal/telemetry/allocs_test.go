//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation counts are only
// comparable without it.

package telemetry_test

import "testing"

// TestTracingOffCostsNoAllocation: with tracing off, a request allocates exactly what it does
// without telemetry (the middleware tests a pointer and goes on); with tracing on it allocates
// more (the test can tell).
func TestTracingOffCostsNoAllocation(t *testing.T) {
	allocs := map[string]float64{}
	for _, c := range telemetries {
		send, _ := inProcess(t, c.tel)
		allocs[c.name] = testing.AllocsPerRun(200, func() { send("GET", "/v1/nothing", "") })
	}
	if allocs["off"] != allocs["none"] || allocs["on"] <= allocs["off"] {
		t.Fatalf("allocations per request: %v; want off = none < on", allocs)
	}
}
