package engine_test

import (
	"context"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
)

// countingModel is an in-process model that answers at once ("Done." to a turn, a summary of
// about 80 tokens to a summary request) and counts, with the builder's counter, the tokens of
// every request: the largest and the total of the turns', and the summarizer's.
type countingModel struct {
	counter *contextbuild.Counter
	mu      sync.Mutex
	turns   int
	maxSent int
	sent    int
	summary int // the summarizer's tokens, sent and answered
}

const benchSummary = "- the user went through the modules one by one, asking what each imports, which of its " +
	"functions are slow and what its tests cover; every module imports three packages, its parser is " +
	"slow and its tests cover the parser but not the error paths; nothing is left open."

func (m *countingModel) Name() string { return "counting" }

func (m *countingModel) Stream(_ context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	n := m.counter.Count(req.System) + 4
	for _, msg := range req.Messages {
		n += m.counter.Count(msg.Content) + 4
	}
	answer := "Done."
	m.mu.Lock()
	if strings.HasPrefix(req.System, contextbuild.SummarizePrompt) {
		answer = benchSummary
		m.summary += n + m.counter.Count(answer)
	} else {
		m.turns++
		m.sent += n
		m.maxSent = max(m.maxSent, n)
	}
	m.mu.Unlock()
	return func(yield func(model.Chunk, error) bool) {
		yield(model.Chunk{Delta: answer, FinishReason: model.FinishStop, Usage: &model.Usage{InputTokens: n, OutputTokens: 2}}, nil)
	}
}

// BenchmarkLongSession runs one session of CARRYON_BENCH_TURNS turns (default 1,000; each a run
// through the runner, its user message about 60 tokens) with the automatic compaction on (a
// threshold of 2,000 tokens) and off (the context builder's budget, 16,000, still cuts history
// with a summary), and reports the tokens sent per turn (the largest and the mean), the time of a
// context build at the end (the run's own Build, median of 50), and the summarizer's tokens per
// 1,000 messages. Run once: go test -run xxx -bench BenchmarkLongSession -benchtime 1x ./internal/engine/
func BenchmarkLongSession(b *testing.B) {
	turns := 1000
	if s := os.Getenv("CARRYON_BENCH_TURNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("CARRYON_BENCH_TURNS=%q is no number of turns", s)
		}
		turns = n
	}
	for _, tc := range []struct {
		name      string
		threshold int
	}{{"compaction=on", 2000}, {"compaction=off", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				m := &countingModel{counter: contextbuild.CounterFor("gpt-4o")}
				f := newFixtureBuilder(b, m, engine.Config{Model: "gpt-4o", CompactThreshold: tc.threshold}, contextbuild.Config{})
				s, err := f.sess.Create(f.alice, carryon.NewSession{Title: "long"})
				if err != nil {
					b.Fatal(err)
				}
				for i := 1; i <= turns; i++ {
					run, err := f.runs.Start(f.alice, s.ID, carryon.NewRun{Message: turnText(i)})
					if err != nil {
						b.Fatal(err)
					}
					if run = f.wait(b, run.ID); run.Status != carryon.RunSucceeded {
						b.Fatalf("turn %d: %s %s", i, run.Status, run.Error)
					}
				}
				var builds []time.Duration
				for range 50 {
					start := time.Now()
					if _, err := f.eng.Builder().Build(f.alice, s.ID, contextbuild.Options{Model: "gpt-4o"}); err != nil {
						b.Fatal(err)
					}
					builds = append(builds, time.Since(start))
				}
				slices.Sort(builds)
				b.ReportMetric(float64(m.maxSent), "max-tokens/turn")
				b.ReportMetric(float64(m.sent)/float64(m.turns), "mean-tokens/turn")
				b.ReportMetric(float64(builds[len(builds)/2].Microseconds()), "build-µs")
				b.ReportMetric(float64(m.summary)*1000/float64(2*turns), "summary-tokens/1k-msgs")
			}
		})
	}
}
