package bench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressTicker tells cfg.Progress how far phase is every 200 ms until the returned function
// is called with the final counts, which it reports once more. state returns the operations done
// and failed so far.
func progressTicker(cfg Config, phase string, start time.Time, state func() (done, failed int)) func(done, failed int) {
	if cfg.Progress == nil {
		return func(int, int) {}
	}
	total := cfg.Count
	limit := cfg.Duration
	if phase == "prefill" {
		total, limit = cfg.Sessions, 0
	}
	report := func(done, failed int) {
		cfg.Progress(Progress{Phase: phase, Done: done, Total: total, Elapsed: time.Since(start), Limit: limit, Errors: failed})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				report(state())
			}
		}
	})
	return func(done, failed int) {
		close(stop)
		wg.Wait()
		report(done, failed)
	}
}

// Bar returns a Progress function that draws a progress bar on a terminal w, redrawn in place;
// call the returned done function before writing anything else to w.
func Bar(w io.Writer) (progress func(Progress), done func()) {
	var mu sync.Mutex
	drawn := false
	progress = func(p Progress) {
		frac := 0.0
		switch {
		case p.Total > 0:
			frac = float64(p.Done) / float64(p.Total)
		case p.Limit > 0:
			frac = float64(p.Elapsed) / float64(p.Limit)
		}
		frac = min(max(frac, 0), 1)
		const width = 30
		fill := int(frac * width)
		rate := 0.0
		if s := p.Elapsed.Seconds(); s > 0 {
			rate = float64(p.Done) / s
		}
		count := fmt.Sprint(p.Done)
		if p.Total > 0 {
			count += fmt.Sprintf("/%d", p.Total)
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "\r\033[K%-8s [%s%s] %3.0f%% %s %.0f/s %s, %d errors",
			p.Phase, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), frac*100, count, rate,
			p.Elapsed.Truncate(100*time.Millisecond), p.Errors)
		drawn = true
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		if drawn {
			fmt.Fprint(w, "\r\033[K")
			drawn = false
		}
	}
	return progress, done
}
