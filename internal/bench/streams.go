package bench

import (
	"context"
	"fmt"
	"sync"

	"github.com/carryon-hub/carryon"
)

// openStreams starts one run on a session of its own and opens n event streams that follow it
// (the streams a live inspector or chat holds), each read until stop is called. The run must
// last while they are open: on the scripted model, a server started with --scripted-delay. stop
// closes the streams and cancels the run.
func openStreams(ctx context.Context, t Target, n int) (stop func(), err error) {
	sess, err := t.Sessions.Create(ctx, carryon.NewSession{Title: "bench streams"})
	if err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	run, err := t.Runs.Start(ctx, sess.ID, carryon.NewRun{Message: "continue the task"})
	if err != nil {
		return nil, fmt.Errorf("streams: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop = func() {
		cancel()
		wg.Wait()
		t.Runs.Cancel(context.WithoutCancel(ctx), run.ID, carryon.RetryOptions{})
	}
	for i := range n {
		es, err := t.Runs.Events(sctx, run.ID, 0, true)
		if err != nil {
			stop()
			return nil, fmt.Errorf("streams: stream %d of %d: %w", i+1, n, err)
		}
		wg.Go(func() {
			defer es.Close()
			for {
				if _, ok, err := es.Next(); !ok || err != nil {
					return
				}
			}
		})
	}
	return stop, nil
}
