package bench

import (
	"context"
	"math"
	"syscall"
	"time"
)

// CPU is the processor time the process serving the target spent while the clients worked.
type CPU struct {
	// Source is "process" (this process's getrusage: the hub and the bench's own clients in it)
	// or "metrics" (a server's process_cpu_seconds_total, read before and after); "" when not
	// measured.
	Source string `json:"source,omitempty"`
	// Seconds is the user and system time spent between the first operation and the last;
	// PerOpMicros that over the operations, failed ones included.
	Seconds     float64 `json:"seconds"`
	PerOpMicros float64 `json:"per_op_us"`
}

// SelfCPU returns the user and system time this process has used so far (getrusage; an error
// where the system has none).
func SelfCPU(context.Context) (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// cpuOf is t.CPU, or 0 without it.
func cpuOf(ctx context.Context, t Target) (time.Duration, error) {
	if t.CPU == nil {
		return 0, nil
	}
	return t.CPU(ctx)
}

// setCPU adds the processor time d the operations cost, read from source.
func (rep *Report) setCPU(source string, d time.Duration) {
	rep.CPU = CPU{Source: source, Seconds: math.Round(d.Seconds()*1e6) / 1e6}
	if ops := rep.Ops + rep.Errors; ops > 0 {
		rep.CPU.PerOpMicros = math.Round(float64(d)/1e3/float64(ops)*10) / 10
	}
}
