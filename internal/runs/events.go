package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// broker wakes the followers and waiters of a run when its events change: at once in this
// process, and in the others through the store's Notifier (PostgreSQL LISTEN/NOTIFY) when it has
// one. Followers also poll, so a lost notification only costs a poll interval.
type broker struct {
	mu sync.Mutex
	// subs are the subscribers of each run; true marks one that waits for the run's status to
	// change (Wait), which the run's progress does not wake.
	subs   map[string]map[chan struct{}]bool
	remote store.Notifier
}

// notifyChannel is the channel run changes are announced on; the payload is the run id.
const notifyChannel = store.RunsChannel

func newBroker(remote store.Notifier) *broker {
	return &broker{subs: map[string]map[chan struct{}]bool{}, remote: remote}
}

// subscribe returns a channel woken by every change of the run, and the function that ends the
// subscription.
func (b *broker) subscribe(runID string) (chan struct{}, func()) {
	return b.join(runID, false)
}

// subscribeStatus is subscribe for a waiter of the run's status: the run's progress (progress)
// does not wake it.
func (b *broker) subscribeStatus(runID string) (chan struct{}, func()) {
	return b.join(runID, true)
}

func (b *broker) join(runID string, status bool) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[runID] == nil {
		b.subs[runID] = map[chan struct{}]bool{}
	}
	b.subs[runID][ch] = status
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

// publish wakes the followers of the run here and, through the Notifier, everywhere: for a change
// that stores no event (a stop request). A transaction that stores an event of the run tells the
// other processes itself (store.RunsChannel), so after it only local is called.
func (b *broker) publish(runID string) {
	b.local(runID)
	if b.remote != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = b.remote.Notify(ctx, notifyChannel, runID) // best effort: followers poll too
	}
}

// local wakes the followers and waiters of the run in this process.
func (b *broker) local(runID string) {
	b.wake(runID, true)
}

// progress wakes the followers of the run in this process, not its status's waiters: for a change
// that leaves the run's status as it was (a step's write).
func (b *broker) progress(runID string) {
	b.wake(runID, false)
}

func (b *broker) wake(runID string, status bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch, waits := range b.subs[runID] {
		if waits && !status {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// localAll wakes every follower in this process: after the Notifier re-subscribed, any of their
// runs may have changed while it was not listening, so each reads the store again.
func (b *broker) localAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, subs := range b.subs {
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// ownBatch is how many events a stream reads at a time when it reads the store itself.
const ownBatch = 100

// Events streams a run's stored events after afterSeq. With follow it waits for new events until
// the run's last event (run.finished or run.failed) or until ctx is done: all the streams that
// follow one run in this process share one follower (follow.go), which polls the run for them.
func (s *Service) Events(ctx context.Context, runID string, afterSeq int64, follow bool) (carryon.EventStream, error) {
	if _, err := s.GetRun(ctx, runID); err != nil {
		return nil, err
	}
	st := &stream{s: s, ctx: ctx, owner: carryon.UserIDFromContext(ctx), runID: runID, after: afterSeq}
	if follow {
		st.f = s.follows.join(s, st)
	}
	return st, nil
}

// stream is one consumer of a run's events, at its own cursor (after). Without a follower it reads
// the stored events itself and ends; with one it takes the events from the follower's buffer,
// reading the store itself only when it is too far behind that buffer.
type stream struct {
	s      *Service
	ctx    context.Context
	owner  string
	runID  string
	after  int64
	f      *follower // nil without follow
	left   bool      // Close took the stream off f (under f.mu)
	buf    []*carryon.Event
	done   bool
	closed bool

	// liveAt and liveSent are the previews this stream sent from and how many; sent holds the
	// data of those whose stored copies have not come yet, to skip them.
	liveAt   previewKey
	liveSent int
	sent     []json.RawMessage
}

func (st *stream) Next() (*carryon.Event, bool, error) {
	for {
		if len(st.buf) > 0 {
			e := st.buf[0]
			st.buf = st.buf[1:]
			if e.Seq == 0 {
				return e, true, nil // a preview: the cursor stays at the stored event it follows
			}
			if st.skip(e) {
				st.after = e.Seq
				continue
			}
			st.after = e.Seq
			if e.Type == carryon.EventRunFinished || e.Type == carryon.EventRunFailed {
				st.done = true
			}
			return e, true, nil
		}
		if st.done {
			return nil, false, nil
		}
		if st.f == nil {
			evs, _, err := st.readOwn()
			if err != nil {
				return nil, false, err
			}
			st.buf, st.done = evs, len(evs) == 0 // without follow, the events stored now
			continue
		}
		if err := st.follow(); err != nil {
			return nil, false, err
		}
	}
}

// skip says whether e is the stored copy of the stream's next unmatched preview; any other stored
// event ends the matching (the previews were lost with their runner: what is stored goes on).
func (st *stream) skip(e *carryon.Event) bool {
	if len(st.sent) == 0 {
		return false
	}
	if e.Type == carryon.EventModelDelta && bytes.Equal(e.Data, st.sent[0]) {
		st.sent = st.sent[1:]
		return true
	}
	st.sent = nil
	return false
}

// follow fills st.buf from the follower, or reads the store itself when it is too far behind, or
// waits for the follower's next poll; it sets st.done when the run ended and every event was sent.
func (st *stream) follow() error {
	f := st.f
	f.mu.Lock()
	if st.left { // closed while a Next was waiting (a server ending its streams at shutdown)
		f.mu.Unlock()
		st.done = true
		return nil
	}
	f.marks[st] = st.after
	need := st.after + 1
	switch {
	case f.started && need > f.base && need <= f.pos:
		for _, e := range f.buf[need-f.base-1:] {
			c := *e // each stream its own copy: no consumer sees another's changes
			st.buf = append(st.buf, &c)
		}
		f.marks[st] = f.pos
		f.mu.Unlock()
		return nil
	case f.err != nil:
		err := f.err
		f.mu.Unlock()
		return err
	case f.started && need > f.pos && f.final:
		f.mu.Unlock()
		st.done = true
		return nil
	case f.started && st.after == f.pos:
		key, live := st.s.previews.since(st.runID, st.after)
		if key != st.liveAt {
			st.liveAt, st.liveSent = key, 0
		}
		if len(live) > st.liveSent {
			for _, e := range live[st.liveSent:] {
				c := *e
				st.buf = append(st.buf, &c)
				st.sent = append(st.sent, e.Data)
			}
			st.liveSent = len(live)
			f.mu.Unlock()
			return nil
		}
	}
	changed := f.changed
	behind := f.started && need <= f.base
	far := behind && (f.pos-st.after > st.s.follows.buffer || st.after < f.floor)
	f.mu.Unlock()
	if far {
		// Too far behind the follower to wait for its buffer: read the backlog here.
		evs, run, err := st.readOwn()
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			st.buf = evs
			return nil
		}
		if run.Status.Terminal() {
			st.done = true
			return nil
		}
	} else if behind {
		f.poke() // the follower reads back to this stream's cursor
	}
	select {
	case <-st.ctx.Done():
		return st.ctx.Err()
	case <-changed:
		return nil
	}
}

// readOwn reads, in one transaction, the run and up to ownBatch of its events after the stream's
// cursor, fewer when they pass the read budget.
func (st *stream) readOwn() ([]*carryon.Event, *carryon.Run, error) {
	var evs []*carryon.Event
	var run *carryon.Run
	err := st.s.st.Read(st.ctx, func(tx store.Tx) error {
		var err error
		if run, err = tx.GetRun(st.ctx, st.owner, st.runID); err != nil {
			return err
		}
		bctx, _ := store.WithReadBudget(st.ctx, carryon.DefaultMaxReadBytes)
		evs, err = tx.EventsAfter(bctx, st.owner, st.runID, st.after, ownBatch)
		return err
	})
	return evs, run, err
}

func (st *stream) Close() error {
	if st.f != nil && !st.closed {
		st.s.follows.leave(st.f, st)
	}
	st.closed = true
	return nil
}
