package runs

import (
	"sync"

	"github.com/carryon-hub/carryon"
)

// maxPreviews bounds the previews kept for one model call; past it, streams get the rest of the
// call's deltas when they are stored.
const maxPreviews = 4096

// previews holds, for each run executing in this process, the model deltas its runner previewed
// (engine.Hub.Preview) and has not stored yet: the step's next write stores them with the same
// data. A stream at the stored event they follow sends them at once, unstored (Seq 0), and skips
// their stored copies when they come, so a client sees a model's words as they are said and a
// resumed stream sees each stored event once.
type previews struct {
	mu sync.Mutex
	m  map[string]*preview // by run id
}

// preview is what one attempt of a run previewed after one stored event.
type preview struct {
	key previewKey
	evs []*carryon.Event
}

// previewKey names the attempt that previewed and the stored event its previews follow.
type previewKey struct {
	attempt int
	after   int64
}

// newer says whether k comes after o: a later attempt, or a later event of the same attempt.
func (k previewKey) newer(o previewKey) bool {
	return k.attempt > o.attempt || k.attempt == o.attempt && k.after > o.after
}

// add keeps ev (its Seq cleared) as a preview of the run; it reports false when a newer attempt
// or stored event superseded it (a runner that lost the run) or the call's previews are full.
func (p *previews) add(runID string, key previewKey, ev carryon.Event) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*preview{}
	}
	cur := p.m[runID]
	switch {
	case cur == nil || key.newer(cur.key):
		cur = &preview{key: key}
		p.m[runID] = cur
	case cur.key != key:
		return false
	}
	if len(cur.evs) >= maxPreviews {
		return false
	}
	ev.Seq = 0
	cur.evs = append(cur.evs, &ev)
	return true
}

// clear forgets the run's previews of attempt (stored now, or lost with its model call).
func (p *previews) clear(runID string, attempt int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.m[runID]; cur != nil && cur.key.attempt <= attempt {
		delete(p.m, runID)
	}
}

// since returns the run's previews that follow its stored event after, and their key.
func (p *previews) since(runID string, after int64) (previewKey, []*carryon.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.m[runID]
	if cur == nil || cur.key.after != after {
		return previewKey{}, nil
	}
	return cur.key, cur.evs
}
