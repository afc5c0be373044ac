package store

import (
	"errors"
	"math"
	"slices"

	"github.com/carryon-hub/carryon"
)

// A session's visible history is a chain of segments: its own rows, then (for a fork) its
// parent's rows up to ForkSeq, and so on up to the root. A fork stores the segments it inherits
// when it is made (Inherit; the drivers keep the nearest ones in the fork's row and point to an
// ancestor for the rest), so a read finds the chain in one row and reads the segments it needs
// in one query (readChain) however deep the chain is; ForkSegments walks the parent links
// instead, one query per ancestor, for a fork stored without its chain and to rebuild one. The
// code is the same for every driver; a driver supplies the queries.

// maxForkDepth bounds a chain walk, so that corrupt parent links cannot loop forever.
const maxForkDepth = 100000

// ForkLink is one session of a fork chain: its id, its key (the small integer its rows are stored
// under), its parent (or "") and the last parent seq it shares.
type ForkLink struct {
	ID       string
	Key      int64
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

// ForkSegment is the rows (Lo, Hi] of one session that a descendant sees. Key names the session
// its rows are stored under; ID, its id, may be empty in a segment read from a stored chain.
type ForkSegment struct {
	ID     string
	Key    int64
	Lo, Hi int64
}

// ParentFunc reads the link of l's parent, which must exist.
type ParentFunc func(l ForkLink) (ForkLink, error)

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
			segs = append(segs, ForkSegment{ID: cur.ID, Key: cur.Key, Lo: lo, Hi: hi})
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

// Inherit returns the segments a fork of a session at forkSeq reads through, nearest first, given
// the segments the session reads (its Chain, its own first): each clamped to seq <= forkSeq, the
// empty ones left out. A fork stores them when it is made, so that reading it needs no walk.
func Inherit(parent []ForkSegment, forkSeq int64) []ForkSegment {
	var out []ForkSegment
	for _, sg := range parent {
		sg.Hi = min(sg.Hi, forkSeq)
		if sg.Lo < sg.Hi {
			out = append(out, sg)
		}
	}
	return out
}

// Chain returns the segments head reads, its own first (Lo, MaxInt64], then inherited, the
// segments its fork stored (Inherit).
func Chain(head ForkLink, inherited []ForkSegment) []ForkSegment {
	return append([]ForkSegment{{ID: head.ID, Key: head.Key, Lo: head.Lo(), Hi: math.MaxInt64}}, inherited...)
}

// RangeFunc reads, in one query, up to limit rows (<= 0: all) of the ranges (Lo, Hi] of the
// segments ranges together, newest first when desc and oldest first otherwise. The ranges of
// one chain never overlap in seq, so one order sorts them all.
type RangeFunc func(ranges []ForkSegment, limit int, desc bool) ([]*carryon.Message, error)

// maxBatchSegments bounds the ranges one query reads.
const maxBatchSegments = 50

// LastBeforeInChain returns the last limit messages of the chain segs (head first, see Chain)
// with seq < before (before <= 0: no bound), oldest first. lastSeq, the head's last seq,
// estimates how many rows its segment holds. See readChain for the queries.
func LastBeforeInChain(segs []ForkSegment, before int64, limit int, lastSeq int64, read RangeFunc) ([]*carryon.Message, error) {
	if limit <= 0 {
		return nil, nil
	}
	var in []ForkSegment
	for _, sg := range segs {
		if before > 0 {
			sg.Hi = min(sg.Hi, before-1)
		}
		if sg.Lo < sg.Hi {
			in = append(in, sg)
		}
	}
	out, err := readChain(in, limit, true, lastSeq, read)
	slices.Reverse(out)
	return out, err
}

// AfterInChain returns up to limit (<= 0: all) messages of the chain segs (head first) with seq >
// after, oldest first.
func AfterInChain(segs []ForkSegment, after int64, limit int, lastSeq int64, read RangeFunc) ([]*carryon.Message, error) {
	var in []ForkSegment
	for _, sg := range slices.Backward(segs) {
		sg.Lo = max(sg.Lo, after)
		if sg.Lo < sg.Hi {
			in = append(in, sg)
		}
	}
	return readChain(in, limit, false, lastSeq, read)
}

// readChain reads up to limit rows (<= 0: all) of segs, in their order. Seqs are dense (a
// session's rows are seqs 1, 2, … up to its last seq, a fork's from its fork point on), so the
// newest n rows of a segment (Lo, Hi] are (Hi-n, Hi] (the head's: (lastSeq-n, ∞)): a query reads
// just the ranges that hold the rows still missing, from as many segments as that takes, in one
// statement whatever the depth of the chain. Where rows are missing (deleted messages, gaps) the
// query returns fewer, and the next one goes on below (or above) what it covered.
func readChain(segs []ForkSegment, limit int, desc bool, lastSeq int64, read RangeFunc) ([]*carryon.Message, error) {
	var out []*carryon.Message
	for len(segs) > 0 && (limit <= 0 || len(out) < limit) {
		need := 0
		if limit > 0 {
			need = limit - len(out)
		}
		budget := int64(need)
		var ranges []ForkSegment
		for len(segs) > 0 && len(ranges) < maxBatchSegments && (need == 0 || budget > 0) {
			sg := segs[0]
			top := min(sg.Hi, max(lastSeq, sg.Lo)) // the segment's rows end here, or about
			switch {
			case need == 0 || top-sg.Lo <= budget:
				ranges, segs = append(ranges, sg), segs[1:]
				budget -= top - sg.Lo
			case desc:
				p := top - budget
				ranges = append(ranges, ForkSegment{ID: sg.ID, Key: sg.Key, Lo: p, Hi: sg.Hi})
				segs[0].Hi, budget = p, 0
			default:
				p := sg.Lo + budget
				ranges = append(ranges, ForkSegment{ID: sg.ID, Key: sg.Key, Lo: sg.Lo, Hi: p})
				segs[0].Lo, budget = p, 0
			}
		}
		ms, err := read(ranges, need, desc)
		if errors.Is(err, ErrBudgetSpent) {
			return append(out, ms...), nil // the reader pages on from the last row
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}
