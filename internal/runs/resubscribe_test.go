package runs_test

import (
	"context"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/store/postgres"
)

// listenVia is a store whose notifications (LISTEN/NOTIFY) go through another connection of the
// same database than its reads and writes: a proxy can cut the one without the other.
type listenVia struct {
	store.Store
	n store.Notifier
}

func (s listenVia) Notify(ctx context.Context, channel, payload string) error {
	return s.n.Notify(ctx, channel, payload)
}

func (s listenVia) Listen(ctx context.Context, channel string, fn func(string)) error {
	return s.n.Listen(ctx, channel, fn)
}

// gates is a model that calls the tools gate1 and gate2 in turn, one a step, then ends its turn.
type gates struct{}

func (gates) Name() string { return "gates" }

func (gates) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		done := 0
		for _, m := range req.Messages {
			if m.Role == model.RoleTool {
				done++
			}
		}
		if done >= 2 {
			yield(model.Chunk{Delta: "Both gates passed.", FinishReason: model.FinishStop}, nil)
			return
		}
		name := []string{"gate1", "gate2"}[done]
		yield(model.Chunk{ToolCalls: []model.ToolCall{{ID: "call_" + name, Name: name, Arguments: []byte(`{}`)}}, FinishReason: model.FinishToolCalls}, nil)
	}
}

// TestStreamCatchesUpAfterResubscribe follows a run on instance B, whose LISTEN connection goes
// through a proxy, while instance A executes it. The proxy cuts that connection and refuses new
// ones while A writes more of the run's events (their notifications are lost), then lets the
// listener back: B re-subscribes and catches up from the store at once (its polls are an hour
// apart), and its stream delivers every event of the run once, in order, to the end.
func TestStreamCatchesUpAfterResubscribe(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	direct, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	proxy, via := pgtest.NewProxyFor(t, dsn)
	listener, err := postgres.Open(context.Background(), via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	e := newHubEnv(t, direct, sessions.Config{})

	entered := map[string]chan struct{}{"gate1": make(chan struct{}, 1), "gate2": make(chan struct{}, 1)}
	release := map[string]chan struct{}{"gate1": make(chan struct{}), "gate2": make(chan struct{})}
	var extra []tool.Tool
	for _, name := range []string{"gate1", "gate2"} {
		extra = append(extra, &probe{name: name, fn: func(ctx context.Context, _ tool.Call) {
			entered[name] <- struct{}{}
			<-release[name]
		}})
	}
	a := runner(t, direct, e.sess, e.data, gates{}, runs.Config{Workers: 1, Poll: 20 * time.Millisecond, Instance: "a"}, extra...)
	b := runner(t, listenVia{Store: direct, n: listener}, sessions.New(direct, sessions.Config{}), e.data, gates{},
		runs.Config{Poll: time.Hour, Instance: "b"})
	work(t, a)
	// Released at the end whatever happens, before the runner is stopped (cleanups run last
	// first), so that a failing test does not leave the run's tool waiting for ever.
	var opened sync.Map
	open := func(name string) {
		if _, done := opened.LoadOrStore(name, true); !done {
			close(release[name])
		}
	}
	t.Cleanup(func() { open("gate1"); open("gate2") })
	listen(t, b)
	_, run := e.startRun(t, a, "pass the gates")
	<-entered["gate1"]

	stream, err := b.Events(e.alice, run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Close() })
	got := make(chan *carryon.Event, 1000)
	ended := make(chan error, 1)
	go func() {
		for {
			ev, ok, err := stream.Next()
			if err != nil || !ok {
				ended <- err
				return
			}
			got <- ev
		}
	}()
	var seqs []int64
	receive := func(what string, until func() bool) {
		t.Helper()
		poll.Eventually(t, what, func() bool {
			for {
				select {
				case ev := <-got:
					if ev.Seq != 0 { // a preview (seq 0) is not a stored event
						seqs = append(seqs, ev.Seq)
					}
					continue
				default:
				}
				return until()
			}
		})
	}
	stored := func() int64 { return int64(len(storedEvents(t, direct, run.ID))) }
	before := stored()
	receive("B has the events stored before the cut", func() bool { return int64(len(seqs)) >= before })

	proxy.Refuse(true)
	proxy.Cut()
	open("gate1")
	<-entered["gate2"]
	during := stored()
	if during <= before {
		t.Fatalf("no event stored during the cut (%d before, %d after)", before, during)
	}
	// With its listener cut off and no poll due, B learns of nothing new.
	if poll.Within(1500*time.Millisecond, func() bool {
		select {
		case ev := <-got:
			seqs = append(seqs, ev.Seq)
		default:
		}
		return int64(len(seqs)) > before
	}) {
		t.Fatalf("B's stream got events written during the cut (%v) without its listener: the test proves nothing", seqs)
	}

	proxy.Refuse(false)
	receive("B catches up once its listener re-subscribed", func() bool { return int64(len(seqs)) >= during })
	open("gate2")
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("B's stream did not end with the run")
	}
	receive("the rest of B's events", func() bool { return true })
	all := storedEvents(t, direct, run.ID)
	if len(seqs) != len(all) {
		t.Fatalf("B's stream delivered seqs %v, the store has %d events", seqs, len(all))
	}
	for i, s := range seqs {
		if s != int64(i+1) || all[i].Seq != s {
			t.Fatalf("B's stream delivered seqs %v: want 1..%d, each once, in order", seqs, len(all))
		}
	}
	if last := all[len(all)-1]; last.Type != carryon.EventRunFinished {
		t.Fatalf("the last event is %s, want the run's end", last.Type)
	}
}
