package runs_test

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/engine"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
)

// counting is a store that counts its read transactions.
type counting struct {
	store.Store
	reads atomic.Int64
}

func (c *counting) Read(ctx context.Context, fn func(store.Tx) error) error {
	c.reads.Add(1)
	return c.Store.Read(ctx, fn)
}

func (c *counting) Unwrap() store.Store { return c.Store }

// paced is a model that answers one delta each time the test sends on next, and ends its turn
// when next is closed.
type paced struct{ next chan struct{} }

func newPaced() *paced { return &paced{next: make(chan struct{})} }

func (p *paced) Name() string { return "paced" }

func (p *paced) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				yield(model.Chunk{}, ctx.Err())
				return
			case _, ok := <-p.next:
				if !ok {
					yield(model.Chunk{Delta: "done", FinishReason: model.FinishStop}, nil)
					return
				}
			}
			if !yield(model.Chunk{Delta: fmt.Sprintf("word%d ", i)}, nil) {
				return
			}
		}
	}
}

// talk has the paced model say n deltas; each is stored as its own event before the next.
func (p *paced) talk(n int) {
	for range n {
		p.next <- struct{}{}
	}
}

// pacedTalk starts a run that talks on a paced model over st, with poll as Config.Poll, once
// setup (if any) has shaped the service: the env, the pace, the service, the run's session and
// the run.
func pacedTalk(t *testing.T, st store.Store, poll time.Duration, setup ...func(*runs.Service)) (*hubEnv, *paced, *runs.Service, *carryon.Session, *carryon.Run) {
	t.Helper()
	e := newHubEnv(t, st, sessions.Config{})
	p := newPaced()
	svc := pacedRunner(t, st, e.sess, e.data, p, runs.Config{Poll: poll, LeaseTTL: time.Hour})
	for _, f := range setup {
		f(svc)
	}
	work(t, svc)
	s, run := e.startRun(t, svc, "talk")
	return e, p, svc, s, run
}

// pacedRunner is a run manager over st whose model is p, with every delta its own event.
func pacedRunner(t *testing.T, st store.Store, sess *sessions.Service, data string, p *paced, cfg runs.Config) *runs.Service {
	t.Helper()
	reg, err := tool.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	builder := contextbuild.New(contextbuild.Config{}, sess, nil)
	eng := engine.New(engine.Config{Model: "paced", Workspaces: filepath.Join(data, "workspaces"), DeltaEvery: time.Nanosecond}, p, reg, builder)
	return runs.New(st, sess, eng, cfg)
}

// storedEvents reads all of a run's events from the store.
func storedEvents(t *testing.T, st store.Store, runID string) []*carryon.Event {
	t.Helper()
	var evs []*carryon.Event
	if err := st.Read(context.Background(), func(tx store.Tx) error {
		var err error
		evs, err = tx.EventsAfter(context.Background(), "usr_alice", runID, 0, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return evs
}

// drain reads a stream to its end.
func drain(es carryon.EventStream) ([]*carryon.Event, error) {
	var got []*carryon.Event
	for {
		e, ok, err := es.Next()
		if err != nil || !ok {
			return got, err
		}
		got = append(got, e)
	}
}

// sameEvents fails the test unless got are the events of all after the cursor, in order.
// A model delta may come as its preview (Seq 0, the same data) in place of its stored copy.
func sameEvents(t *testing.T, what string, got, all []*carryon.Event, after int64) {
	t.Helper()
	want := all[min(after, int64(len(all))):]
	if len(got) != len(want) {
		t.Fatalf("%s after %d: %d events, want %d", what, after, len(got), len(want))
	}
	for i, e := range got {
		w := want[i]
		if e.Seq == 0 && w.Type == carryon.EventModelDelta && e.Type == w.Type && string(e.Data) == string(w.Data) {
			continue // a preview of the stored delta, sent before it was stored
		}
		if e.Seq != w.Seq || e.Type != w.Type || string(e.Data) != string(w.Data) || !e.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("%s after %d: event %d = %d %s %s, want %d %s %s", what, after, i, e.Seq, e.Type, e.Data, w.Seq, w.Type, w.Data)
		}
	}
}

// follow opens n streams of the run on svc, the i-th after cursors(i), and drains them in the
// background; the returned wait gives what each got.
func follow(t *testing.T, ctx context.Context, svc *runs.Service, runID string, n int, cursors func(i int) int64) (wait func() [][]*carryon.Event) {
	t.Helper()
	streams := make([]carryon.EventStream, n)
	for i := range n {
		es, err := svc.Events(ctx, runID, cursors(i), true)
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = es
	}
	got := make([][]*carryon.Event, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, es := range streams {
		wg.Go(func() {
			defer es.Close()
			got[i], errs[i] = drain(es)
		})
	}
	return func() [][]*carryon.Event {
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("stream %d after %d: %v", i, cursors(i), err)
			}
		}
		return got
	}
}

// TestManyStreamsOneRun: 200 streams of one live run, resumed from every cursor the run had
// when they opened, all get every event after their cursor once and in order while the run
// writes them, and the store is read as often as with one stream, not once per stream: the
// run's follower polls for all of them. (Before it, each stream read the store on every
// event.)
func TestManyStreamsOneRun(t *testing.T) {
	t.Parallel()
	st := &counting{Store: drivers()[0].open(t)}
	// No poll in the test's time: only the wake-ups of the run's writes may make reads.
	e, p, svc, _, run := pacedTalk(t, st, time.Hour)
	p.talk(10)
	before := int64(len(storedEvents(t, st, run.ID)))

	const n = 200
	ctx, cancel := context.WithTimeout(e.alice, time.Minute)
	defer cancel()
	// A first stream that has its first event started the follower at the last event; the others
	// are behind it, and it reads back for them.
	leadStream, err := svc.Events(ctx, run.ID, before-1, true)
	if err != nil {
		t.Fatal(err)
	}
	first, ok, err := leadStream.Next()
	if !ok || err != nil {
		t.Fatalf("the first stream's first event: %v %v", ok, err)
	}
	leadDone := make(chan []*carryon.Event, 1)
	go func() {
		defer leadStream.Close()
		rest, err := drain(leadStream)
		if err != nil {
			t.Error(err)
		}
		leadDone <- append([]*carryon.Event{first}, rest...)
	}()
	lead := func() [][]*carryon.Event { return [][]*carryon.Event{<-leadDone} }
	cursor := func(i int) int64 { return int64(i) % (before + 1) }
	wait := follow(t, ctx, svc, run.ID, n, cursor)
	reads := st.reads.Load()
	p.talk(40)
	close(p.next)
	got := append(wait(), lead()...)
	reads = st.reads.Load() - reads

	all := storedEvents(t, st, run.ID)
	if all[len(all)-1].Type != carryon.EventRunFinished {
		t.Fatalf("the run's last event is %s", all[len(all)-1].Type)
	}
	for i := range n {
		sameEvents(t, fmt.Sprintf("stream %d", i), got[i], all, cursor(i))
	}
	sameEvents(t, "the first stream", got[n], all, before-1)
	written := int64(len(all)) - before
	t.Logf("%d streams: %d reads while the run wrote %d events", n, reads, written)
	if limit := 2*written + 20; reads > limit {
		t.Fatalf("%d streams made %d reads while the run wrote %d events; want at most %d", n, reads, written, limit)
	}
	if f := runs.Followers(svc); f != 0 {
		t.Fatalf("%d followers left after every stream closed", f)
	}
}

// TestStreamsBehindTheFollower: with a follower that keeps 4 events, a stream that starts at
// the beginning of a long run reads its backlog itself, one that does not read until the run ended
// gets everything too, a stream after the run's last event ends with the run, and one without
// follow ends with the events stored when it opened.
func TestStreamsBehindTheFollower(t *testing.T) {
	t.Parallel()
	st := drivers()[0].open(t)
	e, p, svc, _, run := pacedTalk(t, st, 20*time.Millisecond, func(svc *runs.Service) { runs.SetFollowBuffer(svc, 4) })
	ctx, cancel := context.WithTimeout(e.alice, time.Minute)
	defer cancel()

	eager := follow(t, ctx, svc, run.ID, 1, func(int) int64 { return 0 })
	slow, err := svc.Events(ctx, run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	beyond := follow(t, ctx, svc, run.ID, 1, func(int) int64 { return 1 << 40 })
	p.talk(20)
	stored := storedEvents(t, st, run.ID)
	once, err := svc.Events(ctx, run.ID, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	onceGot, err := drain(once)
	once.Close()
	if err != nil {
		t.Fatal(err)
	}
	late := follow(t, ctx, svc, run.ID, 3, func(i int) int64 { return int64(i) * 2 })
	p.talk(20)
	close(p.next)

	eagerGot := eager()[0]
	all := storedEvents(t, st, run.ID)
	sameEvents(t, "the eager stream", eagerGot, all, 0)
	if len(onceGot) < len(stored)-3 {
		t.Fatalf("the stream without follow got %d events, %d were stored after 3 when it opened", len(onceGot), len(stored)-3)
	}
	sameEvents(t, "without follow", onceGot, all[:3+len(onceGot)], 3)
	for i, g := range late() {
		sameEvents(t, fmt.Sprintf("late stream %d", i), g, all, int64(i)*2)
	}
	got, err := drain(slow)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "the slow stream", got, all, 0)
	if g := beyond()[0]; len(g) != 0 {
		t.Fatalf("a stream after the last event got %d events", len(g))
	}
}

// TestStreamLeavesWhileWaiting: a stream whose client goes away while it waits for events ends
// with the context's error, and the run's follower stops with its last stream.
func TestStreamLeavesWhileWaiting(t *testing.T) {
	t.Parallel()
	e, p, svc, _, run := pacedTalk(t, drivers()[0].open(t), 20*time.Millisecond)
	p.talk(1)
	ctx, cancel := context.WithCancel(e.alice)
	es, err := svc.Events(ctx, run.ID, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, ok, err := es.Next()
		if err != nil || !ok {
			t.Fatalf("stream before the cancel: %v %v", ok, err)
		}
		if ev.Type == carryon.EventModelDelta {
			break
		}
	}
	cancel()
	if _, ok, err := es.Next(); ok || err != context.Canceled {
		t.Fatalf("Next after the client left = %v, %v; want context.Canceled", ok, err)
	}
	if f := runs.Followers(svc); f != 1 {
		t.Fatalf("%d followers with one stream open", f)
	}
	es.Close()
	if f := runs.Followers(svc); f != 0 {
		t.Fatalf("%d followers after the last stream closed", f)
	}
	close(p.next)
	waitRun(t, svc, e.alice, run.ID)
}

// TestStreamsOnTwoInstances: a run executes on instance A while streams follow it on A and on
// B, which learns of its events through LISTEN/NOTIFY on PostgreSQL, and C, which does not listen
// and only polls (on SQLite, B and C only poll): all get every event once and in order.
func TestStreamsOnTwoInstances(t *testing.T) {
	t.Parallel()
	for _, d := range drivers() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			st := d.open(t)
			e := newHubEnv(t, st, sessions.Config{})
			p := newPaced()
			cfg := runs.Config{Poll: 20 * time.Millisecond, LeaseTTL: time.Hour}
			a := pacedRunner(t, st, e.sess, e.data, p, cfg)
			b := pacedRunner(t, st, e.sess, e.data, newPaced(), cfg)
			c := pacedRunner(t, st, e.sess, e.data, newPaced(), cfg)
			work(t, a)
			listen(t, a)
			listen(t, b)
			_, run := e.startRun(t, a, "talk")
			p.talk(5)
			ctx, cancel := context.WithTimeout(e.alice, time.Minute)
			defer cancel()
			cursor := func(i int) int64 { return int64(i % 6) }
			onA := follow(t, ctx, a, run.ID, 10, cursor)
			onB := follow(t, ctx, b, run.ID, 20, cursor)
			onC := follow(t, ctx, c, run.ID, 20, cursor)
			p.talk(20)
			close(p.next)
			got := map[string][][]*carryon.Event{"A": onA(), "B": onB(), "C": onC()}
			all := storedEvents(t, st, run.ID)
			for name, streams := range got {
				for i, g := range streams {
					sameEvents(t, fmt.Sprintf("stream %d on %s", i, name), g, all, cursor(i))
				}
			}
		})
	}
}

// TestStreamOfADeletedRun: the streams of a live run whose session is deleted end with
// not_found, as their own reads did, from the follower's next poll (nothing announces the
// deletion to the run's streams), and a stream opened after the deletion is refused.
func TestStreamOfADeletedRun(t *testing.T) {
	t.Parallel()
	e, p, svc, s, run := pacedTalk(t, drivers()[0].open(t), 20*time.Millisecond)
	defer close(p.next)
	p.talk(1)
	ctx, cancel := context.WithTimeout(e.alice, time.Minute)
	defer cancel()
	errs := make(chan error, 3)
	for i := range 3 {
		es, err := svc.Events(ctx, run.ID, int64(i), true)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer es.Close()
			_, err := drain(es)
			errs <- err
		}()
	}
	if err := e.sess.Delete(e.alice, s.ID, carryon.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantCode(t, <-errs, carryon.ENOTFOUND)
	}
	_, err := svc.Events(ctx, run.ID, 0, true)
	wantCode(t, err, carryon.ENOTFOUND)
}
