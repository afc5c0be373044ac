package mcptool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/tool"
)

func TestNoMoreCallsThanMaxConcurrentCallsAreInFlight(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.MaxConcurrentCalls = 2
	cfg.CallTimeout = 30 * time.Second
	_, tools := hardTools(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			res, err := tools["hold"].Call(context.Background(), tool.Call{})
			if err == nil && res.Content != "held" {
				err = errors.New("hold answered " + res.Content)
			}
			errs <- err
		})
	}
	eventually(t, "two calls to reach the server", func() bool { return len(lines(t, filepath.Join(dir, "arrived"))) >= 2 })
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	res, err := tools["peak"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "2" {
		t.Errorf("the server had %s calls in flight at once, want 2 (max_concurrent_calls)", res.Content)
	}
	if got := len(lines(t, filepath.Join(dir, "arrived"))); got != 5 {
		t.Errorf("%d calls reached the server, want 5", got)
	}
}

func TestACallWaitingForASlotGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.MaxConcurrentCalls = 1
	cfg.CallTimeout = 30 * time.Second
	_, tools := hardTools(t, cfg)
	held := make(chan error, 1)
	go func() {
		_, err := tools["hold"].Call(context.Background(), tool.Call{})
		held <- err
	}()
	eventually(t, "the first call to reach the server", func() bool { return len(lines(t, filepath.Join(dir, "arrived"))) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tools["pid"].Call(ctx, tool.Call{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call that found no free slot: err = %v, want its context's deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the waiting call took %s past its 200ms deadline", took)
	}
	for _, m := range wire(t, dir) {
		if m.Params.Name == "pid" {
			t.Error("the call that never had a slot was sent to the server")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, held, 20*time.Second); err != nil {
		t.Errorf("the held call: %v", err)
	}
	// The slot is free again.
	if _, err := tools["pid"].Call(context.Background(), tool.Call{}); err != nil {
		t.Errorf("after the slot was freed: %v", err)
	}
}
