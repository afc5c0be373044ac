package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/failpoint"
)

// CompactRequestID is the request id of the automatic compaction of a run's step: the same for
// every attempt of the step, so a step resumed after a crash does not compact again.
func CompactRequestID(runID string, step int) string {
	return fmt.Sprintf("%s/%d/compact", runID, step)
}

// compactThreshold is the run's automatic compaction threshold: its own (NewRun.CompactThreshold)
// when it has one, else the profile's; 0 is off.
func (e *Engine) compactThreshold(run *carryon.Run) int {
	if run.CompactThreshold > 0 {
		return run.CompactThreshold
	}
	return e.cfg.CompactThreshold
}

// compact is the automatic compaction, a durable step of the run: when the context built holds
// more tokens than the run's threshold (compactThreshold), the session is compacted (Hub.Compact, under the
// step's request id) and the context built again. A summarizer that fails or has nothing to
// summarize leaves the history as it was, and the run goes on with the context it had (a note
// says so); only a write the Hub refuses, or the run's end, fails the step.
func (e *Engine) compact(ctx context.Context, hub Hub, run *carryon.Run, step int, built *contextbuild.Context, emit emitFunc) (*contextbuild.Context, error) {
	threshold := e.compactThreshold(run)
	if threshold <= 0 || built.Tokens <= threshold {
		return built, nil
	}
	planned := false
	evs, err := hub.Compact(ctx, run, CompactRequestID(run.ID, step), func(ctx context.Context) (carryon.NewMessage, error) {
		plan, err := e.builder.AutoCompact(ctx, run.SessionID, e.cfg.Model, built, threshold)
		if err != nil {
			return carryon.NewMessage{}, errSummary{err}
		}
		planned = true
		addUsage(run, plan.Usage)
		return plan.Summary, nil
	})
	var summaryErr errSummary
	switch {
	case errors.As(err, &summaryErr) && ctx.Err() == nil:
		e.cfg.Logger.Warn("the automatic compaction did not compact; the run goes on with the history as it is",
			"run", run.ID, "step", step, "tokens", built.Tokens, "threshold", threshold, "err", summaryErr.err)
		built.Notes = append(built.Notes, "the automatic compaction failed ("+carryon.ErrorMessage(summaryErr.err)+"); the history is sent as it is")
		return built, nil
	case err != nil:
		return nil, fmt.Errorf("store the compaction: %w", err)
	}
	if err := emit(evs); err != nil {
		return nil, err
	}
	if !planned {
		return built, nil // an earlier attempt of this step compacted: built already has it
	}
	failpoint.Hit(failpoint.CompactStored)
	again, err := e.builder.Build(ctx, run.SessionID, contextbuild.Options{Model: e.cfg.Model, Summarize: true})
	if err != nil {
		return nil, fmt.Errorf("build the context after the compaction: %w", err)
	}
	addUsage(run, again.SummaryUsage)
	if again.NewSummary != nil {
		evs, err := hub.AppendMessages(ctx, run, []carryon.NewMessage{*again.NewSummary})
		if err != nil {
			return nil, fmt.Errorf("store the summary: %w", err)
		}
		if err := emit(evs); err != nil {
			return nil, err
		}
	}
	return again, nil
}

// errSummary marks the summarizer's error, which leaves the run going, from the Hub's.
type errSummary struct{ err error }

func (e errSummary) Error() string { return e.err.Error() }
func (e errSummary) Unwrap() error { return e.err }
