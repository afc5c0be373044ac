package mcptool_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon/internal/tool"
)

// wedge calls the wedge tool in the background and returns its error channel and the pid of the
// process it wedged, once it is wedged.
func wedge(t *testing.T, ctx context.Context, tl tool.Tool, dir string) (<-chan error, int) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := tl.Call(ctx, tool.Call{})
		errc <- err
	}()
	var pid int
	eventually(t, "the server to be wedged", func() bool {
		got := lines(t, filepath.Join(dir, "wedged"))
		if len(got) == 0 {
			return false
		}
		pid, _ = strconv.Atoi(got[len(got)-1])
		return pid > 0
	})
	return errc, pid
}

func TestAHungServerIsRestartedAndTheNextCallGoesToTheNewProcess(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.CallTimeout = 2 * time.Second
	_, tools := hardTools(t, cfg)
	errc, old := wedge(t, context.Background(), tools["wedge"], dir)
	if err := receive(t, errc, 20*time.Second); err == nil || !strings.Contains(err.Error(), `MCP server "hard" did not answer within 2s`) {
		t.Fatalf("the hung call: err = %v", err)
	}
	// The process does not answer the ping that follows, so it is replaced; the next call, from
	// anyone, reaches a new process within its own timeout.
	start := time.Now()
	res, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatalf("the call after a hung one: %v (took %s)", err, time.Since(start))
	}
	if res.Content == strconv.Itoa(old) {
		t.Fatalf("the call after a hung one reached the hung process %d", old)
	}
	if got := lines(t, filepath.Join(dir, "started")); len(got) != 2 || got[1] != res.Content {
		t.Errorf("starts = %v, the call was answered by %s", got, res.Content)
	}
	eventually(t, "the hung process to be killed", func() bool { return !alive(old) })
}

func TestACallInFlightOnAHungServerFailsWhenItIsRestarted(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.CallTimeout = 8 * time.Second // beyond the restart (a ping bound of 2s after the cancel): only the restart ends the other call
	_, tools := hardTools(t, cfg)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	wedged, old := wedge(t, ctx, tools["wedge"], dir)
	// Another run's call reaches the wedged server, which never answers it.
	other := make(chan error, 1)
	go func() {
		_, err := tools["pid"].Call(context.Background(), tool.Call{})
		other <- err
	}()
	eventually(t, "the other call to reach the server", func() bool {
		return slices.ContainsFunc(wire(t, dir), func(m wireMessage) bool { return m.Params.Name == "pid" })
	})
	// The first call's run gives up on it (its lease is lost): the server is checked, found
	// deaf to a ping and restarted, and the other call fails at once with a clear error.
	lost := errors.New("the run lost its lease")
	cancel(lost)
	if err := receive(t, wedged, 10*time.Second); !errors.Is(err, lost) {
		t.Errorf("the abandoned call: err = %v, want its context's cause", err)
	}
	start := time.Now()
	err := receive(t, other, 15*time.Second)
	if err == nil || !strings.Contains(err.Error(), `MCP server "hard" stopped answering and was restarted during the call`) ||
		!strings.Contains(err.Error(), "did not answer a ping within") || !strings.Contains(err.Error(), "may or may not have taken effect") {
		t.Fatalf("the call in flight at the restart: err = %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the call in flight waited %s for the restart", took)
	}
	res, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil || res.Content == strconv.Itoa(old) {
		t.Fatalf("after the restart: %q, %v (the hung process was %d)", res.Content, err, old)
	}
}

func TestAServerWhoseCallsKeepTimingOutIsRestarted(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.CallTimeout = time.Second
	_, tools := hardTools(t, cfg)
	first, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	// hold answers pings and honours notifications/cancelled, but never finishes in time.
	for i := range 3 {
		if _, err := tools["hold"].Call(context.Background(), tool.Call{}); err == nil || !strings.Contains(err.Error(), "did not answer within 1s") {
			t.Fatalf("hold %d: err = %v", i, err)
		}
	}
	res, err := tools["pid"].Call(context.Background(), tool.Call{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content == first.Content {
		t.Errorf("after three timeouts in a row the same process %s answers", first.Content)
	}
	if got := lines(t, filepath.Join(dir, "started")); len(got) != 2 {
		t.Errorf("starts = %v, want 2", got)
	}
}

func TestATimedOutCallIsCancelledOnTheWire(t *testing.T) {
	t.Parallel()
	cfg, dir := hardConfig(t)
	cfg.CallTimeout = 500 * time.Millisecond
	_, tools := hardTools(t, cfg)
	if _, err := tools["hold"].Call(context.Background(), tool.Call{}); err == nil || !strings.Contains(err.Error(), "did not answer within 500ms") {
		t.Fatalf("err = %v", err)
	}
	var call, cancelled *wireMessage
	eventually(t, "notifications/cancelled to reach the server", func() bool {
		msgs := wire(t, dir)
		call, cancelled = nil, nil
		for i, m := range msgs {
			switch {
			case m.Method == "tools/call" && m.Params.Name == "hold":
				call = &msgs[i]
			case m.Method == "notifications/cancelled":
				cancelled = &msgs[i]
			}
		}
		return call != nil && cancelled != nil
	})
	if !bytes.Equal(cancelled.Params.RequestID, call.ID) {
		t.Errorf("notifications/cancelled names request %s, the call was %s", cancelled.Params.RequestID, call.ID)
	}
	if cancelled.Params.Reason == "" {
		t.Error("notifications/cancelled gives no reason")
	}
	// The server honoured the cancellation: it answers the next call at once.
	if _, err := tools["pid"].Call(context.Background(), tool.Call{}); err != nil {
		t.Errorf("after a cancelled call: %v", err)
	}
}
