package runs

import (
	"context"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// broker wakes the streams of a run when its events change: at once in this process, and in the
// others through the store's Notifier (PostgreSQL LISTEN/NOTIFY) when it has one. Streams also
// poll, so a lost notification only costs a poll interval.
type broker struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	remote store.Notifier
}

// notifyChannel is the channel run changes are announced on; the payload is the run id.
const notifyChannel = "carryon_runs"

func newBroker(remote store.Notifier) *broker {
	return &broker{subs: map[string]map[chan struct{}]struct{}{}, remote: remote}
}

func (b *broker) subscribe(runID string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan struct{}]struct{}{}
	}
	b.subs[runID][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[runID], ch)
		if len(b.subs[runID]) == 0 {
			delete(b.subs, runID)
		}
		b.mu.Unlock()
	}
}

// publish wakes the streams of the run here and, through the Notifier, everywhere.
func (b *broker) publish(runID string) {
	b.local(runID)
	if b.remote != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.remote.Notify(ctx, notifyChannel, runID) // best effort: streams poll too
	}
}

// local wakes the streams of the run in this process.
func (b *broker) local(runID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[runID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Events streams a run's stored events after afterSeq. With follow it waits for new events until
// the run's last event (run.finished or run.failed) or until ctx is done.
func (s *Service) Events(ctx context.Context, runID string, afterSeq int64, follow bool) (carryon.EventStream, error) {
	if _, err := s.GetRun(ctx, runID); err != nil {
		return nil, err
	}
	ch, unsub := s.notify.subscribe(runID)
	return &stream{s: s, ctx: ctx, owner: carryon.UserIDFromContext(ctx), runID: runID, after: afterSeq, follow: follow, wake: ch, unsub: unsub}, nil
}

type stream struct {
	s      *Service
	ctx    context.Context
	owner  string
	runID  string
	after  int64
	follow bool
	buf    []*carryon.Event
	done   bool
	wake   chan struct{}
	unsub  func()
}

func (st *stream) Next() (*carryon.Event, bool, error) {
	for {
		if len(st.buf) > 0 {
			e := st.buf[0]
			st.buf = st.buf[1:]
			st.after = e.Seq
			if e.Type == carryon.EventRunFinished || e.Type == carryon.EventRunFailed {
				st.done = true
			}
			return e, true, nil
		}
		if st.done {
			return nil, false, nil
		}
		var run *carryon.Run
		err := st.s.st.Read(st.ctx, func(tx store.Tx) error {
			var err error
			if st.buf, err = tx.EventsAfter(st.ctx, st.owner, st.runID, st.after, 100); err != nil {
				return err
			}
			run, err = tx.GetRun(st.ctx, st.owner, st.runID)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		if len(st.buf) > 0 {
			continue
		}
		if run.Status.Terminal() || !st.follow {
			st.done = true
			continue
		}
		select {
		case <-st.ctx.Done():
			return nil, false, st.ctx.Err()
		case <-st.wake:
		case <-time.After(st.s.cfg.Poll):
		}
	}
}

func (st *stream) Close() error {
	st.unsub()
	return nil
}
