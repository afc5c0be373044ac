package runs

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

const (
	// followBatch is how many new events a follower reads at a time.
	followBatch = 500
	// followBuffer bounds the events a follower keeps for its streams; a stream further behind
	// reads its backlog itself.
	followBuffer = 1000
	// followBackoff bounds how far a follower's poll slows down, in Config.Poll intervals, while
	// its run does not change.
	followBackoff = 8
)

// followers are the followers of the runs streamed in this process, one a run.
type followers struct {
	mu     sync.Mutex
	m      map[string]*follower // by owner and run id
	buffer int64                // followBuffer (tests make it smaller)
}

// follower polls one run for all the streams that follow it in this process: one read
// transaction a poll (the run's status and its events after the last one read), however many
// streams. It polls when the broker says the run changed (in this process, or in another through
// the store's Notifier), when a stream needs events it does not hold, and every Config.Poll
// otherwise, backing off to followBackoff times that while nothing changes (the poll only covers
// lost notifications and writers without a Notifier). It keeps every event after the lowest
// cursor of its streams, up to followBuffer, and each stream takes them from there at its own pace.
// The first stream of a run starts it; it stops when the last one leaves or when a poll fails
// (its streams then end with the error, as a stream's own read would).
type follower struct {
	s            *Service
	key          string
	owner, runID string
	refs         int // under followers.mu
	cancel       context.CancelFunc
	kick         chan struct{} // poll now

	mu       sync.Mutex
	started  bool  // the first poll is done
	base     int64 // buf holds every event with base < seq <= pos
	pos      int64 // the last event read
	buf      []*carryon.Event
	status   carryon.RunStatus
	final    bool              // the run ended and pos is its last event
	floor    int64             // no reading back below it: the events before it did not come back
	err      error             // the poll that failed
	marks    map[*stream]int64 // each stream's cursor: it has every event up to it
	changed  chan struct{}     // closed (and replaced) after every poll and preview
	polledAt time.Time         // when the last poll ended

}

// wake wakes the streams of the run's follower in this process, if it has one, without a poll
// (a preview came).
func (fs *followers) wake(owner, runID string) {
	fs.mu.Lock()
	f := fs.m[owner+"\x00"+runID]
	fs.mu.Unlock()
	if f != nil {
		f.mu.Lock()
		f.broadcast()
		f.mu.Unlock()
	}
}

// join adds st to the follower of its run, starting one when it is the first.
func (fs *followers) join(s *Service, st *stream) *follower {
	key := st.owner + "\x00" + st.runID
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[key]; f != nil {
		f.mu.Lock()
		if f.err == nil {
			f.marks[st] = st.after
			// A stream at the head of what the follower read a while ago: poll now, as the
			// stream's own first read would have (a notification may have been lost).
			stale := f.started && !f.final && st.after >= f.pos && time.Since(f.polledAt) > s.cfg.Poll
			f.mu.Unlock()
			if stale {
				f.poke()
			}
			f.refs++
			return f
		}
		f.mu.Unlock() // it failed: its streams end, and st gets a new follower
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &follower{s: s, key: key, owner: st.owner, runID: st.runID, cancel: cancel, kick: make(chan struct{}, 1),
		marks: map[*stream]int64{st: st.after}, changed: make(chan struct{}), refs: 1}
	fs.m[key] = f
	wake, unsub := s.notify.subscribe(st.runID)
	go func() {
		defer unsub()
		f.run(ctx, wake)
	}()
	return f
}

// leave takes st off its follower, stopping the follower when it was the last stream.
func (fs *followers) leave(f *follower, st *stream) {
	f.mu.Lock()
	delete(f.marks, st)
	st.left = true
	f.mu.Unlock()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.refs--
	if f.refs == 0 {
		f.cancel()
		if fs.m[f.key] == f {
			delete(fs.m, f.key)
		}
	}
}

// drop forgets a follower whose poll failed, so that new streams start another.
func (fs *followers) drop(f *follower) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m[f.key] == f {
		delete(fs.m, f.key)
	}
}

// poke asks the follower to poll now.
func (f *follower) poke() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// run polls until ctx is done (the last stream left) or a poll fails.
func (f *follower) run(ctx context.Context, wake <-chan struct{}) {
	interval := f.s.cfg.Poll
	timer := time.NewTimer(interval)
	defer timer.Stop()
	timed := false
	for {
		more, changed, err := f.poll(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			f.mu.Lock()
			f.err = err
			f.broadcast()
			f.mu.Unlock()
			f.s.follows.drop(f)
			return
		}
		switch {
		case changed:
			interval = f.s.cfg.Poll
		case timed:
			interval = min(2*interval, followBackoff*f.s.cfg.Poll)
		}
		timed = false
		if more {
			continue
		}
		f.mu.Lock()
		final := f.final
		f.mu.Unlock()
		var tick <-chan time.Time
		if !final { // an ended run has no new events: only a stream behind the buffer needs a poll
			timer.Reset(interval)
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		case <-wake:
		case <-tick:
			timed = true
		}
		timer.Stop()
	}
}

// poll reads the run and its new events in one transaction, and the events before its buffer
// that a stream close behind it needs, and hands them to the streams. more says that there may be
// new events left to read at once.
func (f *follower) poll(ctx context.Context) (more, changed bool, err error) {
	f.mu.Lock()
	from, reset := f.pos, !f.started
	low := int64(-1) // the lowest cursor of a stream that waits for events before the buffer
	for _, m := range f.marks {
		if (!f.started || m < f.base && m >= f.floor && f.pos-m <= f.s.follows.buffer) && (low < 0 || m < low) {
			low = m
		}
	}
	var backFrom, backTo int64 = -1, -1
	switch {
	case low < 0:
	case !f.started || len(f.buf) == 0:
		from, reset = low, true // nothing held: start over from that cursor
	default:
		backFrom, backTo = low, f.base
	}
	f.mu.Unlock()

	var run *carryon.Run
	var back, fwd []*carryon.Event
	var spent bool // the forward read stopped at its byte budget: there is more
	err = f.s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		if run, err = tx.GetRun(ctx, f.owner, f.runID); err != nil {
			return err
		}
		if backFrom >= 0 {
			if back, err = tx.EventsAfter(ctx, f.owner, f.runID, backFrom, int(backTo-backFrom)); err != nil {
				return err
			}
		}
		bctx, budget := store.WithReadBudget(ctx, carryon.DefaultMaxReadBytes)
		fwd, err = tx.EventsAfter(bctx, f.owner, f.runID, from, followBatch)
		spent = budget.Spent()
		return err
	})
	if err != nil {
		return false, false, err
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	changed = len(fwd) > 0 || run.Status != f.status
	f.status = run.Status
	if reset {
		f.buf, f.base, f.pos = nil, from, from
	} else if backFrom >= 0 && backTo == f.base {
		if contiguous(back, backFrom, backTo) {
			f.buf, f.base = append(back, f.buf...), backFrom
		} else {
			f.floor = backTo // events went missing: the streams behind read what is left themselves
		}
	}
	for _, e := range fwd {
		if e.Seq != f.pos+1 {
			// A gap (the store's seqs have none, unless events were deleted): the buffer holds what
			// follows it, and a stream before it reads what is left itself.
			f.buf, f.base = nil, e.Seq-1
			f.floor = f.base
		}
		f.buf = append(f.buf, e)
		f.pos = e.Seq
	}
	f.started = true
	more = len(fwd) == followBatch || spent
	f.final = run.Status.Terminal() && !more
	f.trim()
	f.polledAt = time.Now()
	f.broadcast()
	return more, changed, nil
}

// contiguous says whether evs are the events from+1 to to.
func contiguous(evs []*carryon.Event, from, to int64) bool {
	if int64(len(evs)) != to-from {
		return false
	}
	for i, e := range evs {
		if e.Seq != from+1+int64(i) {
			return false
		}
	}
	return true
}

// trim drops the events every stream in reach of the buffer already has, and the oldest beyond
// followBuffer.
func (f *follower) trim() {
	keep := f.pos
	for _, m := range f.marks {
		if m >= f.base && m < keep {
			keep = m
		}
	}
	keep = max(keep, f.pos-f.s.follows.buffer)
	if keep > f.base {
		f.buf = slices.Delete(f.buf, 0, int(keep-f.base))
		f.base = keep
	}
}

// broadcast wakes the streams waiting for the follower; f.mu is held.
func (f *follower) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}
