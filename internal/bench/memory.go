package bench

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Memory is the peak memory of the process that serves the target while the benchmark ran.
type Memory struct {
	// Source is "process" (this process, with the hub in it) or "metrics" (the server's
	// /metrics, sampled); "" when not measured.
	Source string `json:"source,omitempty"`
	// PeakHeapBytes is the largest Go heap in use seen (sampled); PeakRSSBytes the resident set's
	// high-water mark (the kernel's, for this process; sampled, for a server).
	PeakHeapBytes uint64 `json:"peak_heap_bytes,omitempty"`
	PeakRSSBytes  uint64 `json:"peak_rss_bytes,omitempty"`
}

// Self samples this process: the Go heap in use and the kernel's high-water mark of the
// resident set (Linux's VmHWM; 0 elsewhere).
func Self(context.Context) (Memory, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Memory{Source: "process", PeakHeapBytes: ms.HeapAlloc, PeakRSSBytes: peakRSS()}, nil
}

// peakRSS is VmHWM of /proc/self/status in bytes, 0 when it cannot be read.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// sampler keeps the largest figures a memory sampler returns, every interval (100 ms unless
// said).
type sampler struct {
	fn     func(context.Context) (Memory, error)
	every  time.Duration
	mu     sync.Mutex
	max    Memory
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newSampler(fn func(context.Context) (Memory, error), every time.Duration) *sampler {
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	return &sampler{fn: fn, every: every}
}

func (s *sampler) start(ctx context.Context) {
	if s.fn == nil {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Go(func() {
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			s.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

func (s *sampler) sample(ctx context.Context) {
	m, err := s.fn(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.max.Source = m.Source
	s.max.PeakHeapBytes = max(s.max.PeakHeapBytes, m.PeakHeapBytes)
	s.max.PeakRSSBytes = max(s.max.PeakRSSBytes, m.PeakRSSBytes)
}

func (s *sampler) stop() {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
	}
}

// peak takes a last sample and returns the largest figures seen.
func (s *sampler) peak(ctx context.Context) Memory {
	if s.fn == nil {
		return Memory{}
	}
	s.stop()
	s.sample(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// LoadAverage returns the machine's 1, 5 and 15 minute load averages (Linux's /proc/loadavg),
// nil when they cannot be read.
func LoadAverage() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	var out []float64
	for _, s := range f[:3] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}
