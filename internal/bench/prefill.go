package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/carryon-hub/carryon"
)

// prefill makes the sessions, each with a goal and a next action and History messages (user and
// assistant in turn, appended carryon.MaxAppendMessages at a time, without request ids), by
// Concurrency clients, and returns their ids.
func prefill(ctx context.Context, cfg Config, t Target) ([]string, error) {
	ids := make([]string, cfg.Sessions)
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
		once       sync.Once
		first      error
	)
	stop := progressTicker(cfg, "prefill", time.Now(), func() (int, int) { return int(done.Load()), 0 })
	for range cfg.Concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) || ctx.Err() != nil {
					return
				}
				id, err := fill(ctx, t.Sessions, i, cfg.History)
				if err != nil {
					once.Do(func() { first = err })
					next.Store(int64(len(ids))) // stop the others
					return
				}
				ids[i] = id
				done.Add(1)
			}
		})
	}
	wg.Wait()
	stop(int(done.Load()), 0)
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	if first != nil {
		return nil, fmt.Errorf("prefill: %w", first)
	}
	return ids, nil
}

// fill makes session i with history messages.
func fill(ctx context.Context, ss carryon.SessionService, i, history int) (string, error) {
	sess, err := ss.Create(ctx, carryon.NewSession{
		Title:         fmt.Sprintf("bench %d", i),
		WorkingMemory: carryon.WorkingMemory{"goal": "find why the nightly job fails", "next_action": "inspect item 0"},
	})
	if err != nil {
		return "", err
	}
	for n := 0; n < history; {
		batch := make([]carryon.NewMessage, 0, min(history-n, carryon.MaxAppendMessages))
		for ; n < history && len(batch) < cap(batch); n++ {
			if n%2 == 0 {
				batch = append(batch, carryon.NewMessage{Role: carryon.RoleUser, Content: fmt.Sprintf("turn %d: please continue the investigation where we stopped", n/2+1)})
			} else {
				batch = append(batch, carryon.NewMessage{Role: carryon.RoleAssistant, Content: fmt.Sprintf("step %d: checked the log, next I will look at the config file", n)})
			}
		}
		if _, err := ss.AppendMessages(ctx, sess.ID, carryon.AppendInput{Messages: batch}); err != nil {
			return "", err
		}
	}
	return sess.ID, nil
}
