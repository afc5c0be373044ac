package store

import (
	"math"
	"slices"

	"github.com/carryon-hub/carryon"
)

// A session's visible history is a chain of segments: its own rows, then (for a fork) its
// parent's rows up to ForkSeq, and so on up to the root. The walks below are the same for every
// driver; a driver supplies how to read a parent's link and a segment's rows, and the walks read
// only as far up the chain as they need.

// maxForkDepth bounds a chain walk, so that corrupt parent links cannot loop forever.
const maxForkDepth = 100000

// ForkLink is one session of a fork chain: its id, its parent (or "") and the last parent seq it
// shares.
type ForkLink struct {
	ID       string
	ParentID string
	ForkSeq  int64
}

// Lo is the seq at and below which the session's history is its parent's.
func (l ForkLink) Lo() int64 {
	if l.ParentID == "" {
		return 0
	}
	return l.ForkSeq
}

// ForkSegment is the rows (Lo, Hi] of one session that a descendant sees.
type ForkSegment struct {
	ID     string
	Lo, Hi int64
}

// ParentFunc reads the link of l's parent, which must exist.
type ParentFunc func(l ForkLink) (ForkLink, error)

// ReadFunc reads up to n rows (n <= 0: all) of a segment, newest first or oldest first as the
// walk asks.
type ReadFunc func(seg ForkSegment, n int) ([]*carryon.Message, error)

// ForkSegments returns the chain of head, head first, stopping at the first session whose segment
// lies entirely at or below seq floor (a negative floor: the whole chain).
func ForkSegments(head ForkLink, floor int64, parent ParentFunc) ([]ForkSegment, error) {
	var segs []ForkSegment
	cur, hi := head, int64(math.MaxInt64)
	for depth := 0; ; depth++ {
		if depth > maxForkDepth {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", head.ID)
		}
		lo := cur.Lo()
		if lo < hi {
			segs = append(segs, ForkSegment{ID: cur.ID, Lo: lo, Hi: hi})
		}
		if cur.ParentID == "" || lo <= floor {
			return segs, nil
		}
		hi = min(hi, lo)
		var err error
		if cur, err = parent(cur); err != nil {
			return nil, err
		}
	}
}

// LastInChain returns the last limit messages visible from head, oldest first. newest reads a
// segment's rows newest first; the walk climbs to a parent only while it still needs rows, so it
// reads at most limit rows.
func LastInChain(head ForkLink, limit int, parent ParentFunc, newest ReadFunc) ([]*carryon.Message, error) {
	return LastBeforeInChain(head, 0, limit, parent, newest)
}

// LastBeforeInChain is LastInChain of the messages with seq < before (before <= 0: no bound).
func LastBeforeInChain(head ForkLink, before int64, limit int, parent ParentFunc, newest ReadFunc) ([]*carryon.Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*carryon.Message
	cur, hi := head, int64(math.MaxInt64)
	if before > 0 {
		hi = before - 1
	}
	for depth := 0; len(out) < limit; depth++ {
		if depth > maxForkDepth {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", head.ID)
		}
		lo := cur.Lo()
		if lo < hi {
			ms, err := newest(ForkSegment{ID: cur.ID, Lo: lo, Hi: hi}, limit-len(out))
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
		if cur.ParentID == "" || len(out) >= limit {
			break
		}
		hi = min(hi, lo)
		var err error
		if cur, err = parent(cur); err != nil {
			return nil, err
		}
	}
	slices.Reverse(out)
	return out, nil
}

// AfterInChain returns up to limit (<= 0: all) messages visible from head with seq > after, oldest
// first. oldest reads a segment's rows oldest first; ancestors are read only when after lies in
// their part.
func AfterInChain(head ForkLink, after int64, limit int, parent ParentFunc, oldest ReadFunc) ([]*carryon.Message, error) {
	segs, err := ForkSegments(head, after, parent)
	if err != nil {
		return nil, err
	}
	var out []*carryon.Message
	for _, sg := range slices.Backward(segs) {
		sg.Lo = max(sg.Lo, after)
		if sg.Lo >= sg.Hi {
			continue
		}
		n := 0
		if limit > 0 {
			n = limit - len(out)
		}
		ms, err := oldest(sg, n)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}
