package sqlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The fork chain's walks are in package store; these read its links and segments.

// ownLink returns the chain link of the owner's session, with lock appended to the query (a
// row-locking clause or ""). ENOTFOUND when missing or foreign.
func (t *Tx) ownLink(ctx context.Context, owner, id, lock string) (store.ForkLink, error) {
	l := store.ForkLink{ID: id}
	var parent *string
	err := t.Conn.QueryRow(ctx, `SELECT parent_id, fork_seq, session_key FROM sessions WHERE id = ? AND owner_id = ?`+lock,
		id, owner).Scan(&parent, &l.ForkSeq, &l.Key)
	if errors.Is(err, ErrNoRows) {
		return l, NotFound("session", id)
	} else if err != nil {
		return l, t.Wrap(err, "get session")
	}
	l.ParentID = Text(parent)
	t.rememberKey(owner, id, l.Key)
	return l, nil
}

// chainInline is how many segments a fork's row holds; a longer chain ends with a tail, the
// ancestor whose own chain goes on from there, so the row of a fork stays small however deep it
// is, and a read that needs the nearest segments only (the last messages) reads one row.
const chainInline = 32

// chain returns the first segments session id reads, its own first (store.Chain), the tail that
// the rest of its chain is (nil when none: see expand), and its last seq. With owner set, a
// session that is not the owner's is ENOTFOUND. It reads one row, and walks the parent links
// only for a fork stored without its chain (before migration fork_chains).
func (t *Tx) chain(ctx context.Context, owner, id string) ([]store.ForkSegment, *store.ForkSegment, int64, error) {
	return t.chainWhere(ctx, owner, `s.id = ?`, id)
}

// chainWhere is chain of the session the condition where (on sessions s) with its argument
// names: by id, or by key for a tail.
func (t *Tx) chainWhere(ctx context.Context, owner, where string, arg any) ([]store.ForkSegment, *store.ForkSegment, int64, error) {
	var l store.ForkLink
	var parent, segs *string
	var last int64
	q := `SELECT s.id, s.session_key, s.parent_id, s.fork_seq, s.last_seq, c.segments FROM sessions s
		LEFT JOIN fork_chains c ON c.session_id = s.id WHERE ` + where
	args := []any{arg}
	if owner != "" {
		q += ` AND s.owner_id = ?`
		args = append(args, owner)
	}
	err := t.Conn.QueryRow(ctx, q, args...).Scan(&l.ID, &l.Key, &parent, &l.ForkSeq, &last, &segs)
	if errors.Is(err, ErrNoRows) {
		return nil, nil, 0, NotFound("session", fmt.Sprint(arg))
	} else if err != nil {
		return nil, nil, 0, t.Wrap(err, "get session")
	}
	l.ParentID = Text(parent)
	if l.ParentID != "" && segs == nil {
		chain, err := store.ForkSegments(l, -1, t.parentOf(ctx))
		return chain, nil, last, err
	}
	var inherited []store.ForkSegment
	var tail *store.ForkSegment
	if l.ParentID != "" {
		if inherited, tail, err = decodeSegments(*segs); err != nil {
			return nil, nil, 0, t.Wrap(err, "read fork chain of "+l.ID)
		}
	}
	return store.Chain(l, inherited), tail, last, nil
}

// expand returns the segments a tail stands for: the chain of the session tail.Key clamped to
// seq <= tail.Hi (store.Inherit), and the tail that follows them.
func (t *Tx) expand(ctx context.Context, tail *store.ForkSegment) ([]store.ForkSegment, *store.ForkSegment, error) {
	segs, next, _, err := t.chainWhere(ctx, "", `s.session_key = ?`, tail.Key)
	if err != nil {
		return nil, nil, err
	}
	if next != nil {
		next.Hi = min(next.Hi, tail.Hi)
	}
	return store.Inherit(segs, tail.Hi), next, nil
}

// expandAll appends to the segments segs of session id those its tail stands for, to the root.
func (t *Tx) expandAll(ctx context.Context, id string, segs []store.ForkSegment, tail *store.ForkSegment) ([]store.ForkSegment, error) {
	var err error
	for depth := 0; tail != nil; depth++ {
		if depth > 100000 {
			return nil, carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", id)
		}
		var more []store.ForkSegment
		if more, tail, err = t.expand(ctx, tail); err != nil {
			return nil, err
		}
		segs = append(segs, more...)
	}
	return segs, nil
}

// storeChain stores the segments the fork s inherits from its parent (InsertSession calls it):
// the parent's segment and what the parent inherits, up to chainInline of them, then the tail.
func (t *Tx) storeChain(ctx context.Context, s *carryon.Session) error {
	parent, tail, _, err := t.chain(ctx, "", s.ParentID)
	if err != nil {
		return err
	}
	segs := store.Inherit(parent, s.ForkSeq)
	if tail != nil {
		tail.Hi = min(tail.Hi, s.ForkSeq)
	}
	if len(segs) > chainInline {
		tail = &store.ForkSegment{ID: segs[chainInline].ID, Key: segs[chainInline].Key, Hi: segs[chainInline].Hi}
		segs = segs[:chainInline]
	}
	_, err = t.Conn.Exec(ctx, `INSERT INTO fork_chains (session_id, segments) VALUES (?, ?)
		ON CONFLICT (session_id) DO UPDATE SET segments = excluded.segments`, s.ID, encodeSegments(segs, tail))
	return t.Wrap(err, "store fork chain")
}

// BackfillForkChains stores the chain of every fork that has none (made before migration
// fork_chains), so that existing forks read flat too, and returns how many it stored. The drivers'
// Migrate calls it after the migrations, in their transaction; with nothing to do it is one
// query.
func (t *Tx) BackfillForkChains(ctx context.Context) (int, error) {
	forks, err := scanAll(t, ctx, "backfill fork chains", func(r Row) (*carryon.Session, error) {
		var s carryon.Session
		err := r.Scan(&s.ID, &s.ParentID, &s.ForkSeq)
		return &s, err
	}, `SELECT s.id, s.parent_id, s.fork_seq FROM sessions s WHERE s.parent_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM fork_chains c WHERE c.session_id = s.id) ORDER BY s.created_at, s.id`)
	if err != nil {
		return 0, err
	}
	for _, f := range forks { // parents first, mostly; a parent without a chain yet is walked
		if err := t.storeChain(ctx, f); err != nil {
			return 0, err
		}
	}
	return len(forks), nil
}

// rechain rebuilds the chains that name the session id (whose key is key), which DeleteSession
// is about to delete after it materialised the forks of id: each from its parent's chain, a
// parent's first, so each costs a few queries whatever the depth.
func (t *Tx) rechain(ctx context.Context, id string, key int64) error {
	ids, err := scanAll(t, ctx, "rebuild fork chains", func(r Row) (string, error) {
		var s string
		err := r.Scan(&s)
		return s, err
	}, `SELECT session_id FROM fork_chains WHERE segments LIKE ?`, "% "+strconv.FormatInt(key, 10)+"\n%")
	if err != nil {
		return err
	}
	stale := map[string]bool{}
	for _, d := range ids {
		stale[d] = d != id
	}
	var rebuild func(d string, depth int) error
	rebuild = func(d string, depth int) error {
		if !stale[d] {
			return nil
		}
		stale[d] = false
		if depth > 100000 {
			return carryon.Errorf(carryon.EINTERNAL, "fork chain of %s is too deep", d)
		}
		var parent *string
		var forkSeq int64
		if err := t.Conn.QueryRow(ctx, `SELECT parent_id, fork_seq FROM sessions WHERE id = ?`, d).Scan(&parent, &forkSeq); err != nil {
			return t.Wrap(err, "rebuild fork chain of "+d)
		}
		if parent == nil {
			_, err := t.Conn.Exec(ctx, `DELETE FROM fork_chains WHERE session_id = ?`, d)
			return t.Wrap(err, "rebuild fork chain of "+d)
		}
		if err := rebuild(*parent, depth+1); err != nil {
			return err
		}
		return t.storeChain(ctx, &carryon.Session{ID: d, ParentID: *parent, ForkSeq: forkSeq})
	}
	for _, d := range ids {
		if err := rebuild(d, 0); err != nil {
			return err
		}
	}
	return nil
}

// encodeSegments writes segs one a line, "lo hi key" (the key of the session whose rows they
// are), and the tail as a last line "> hi key".
func encodeSegments(segs []store.ForkSegment, tail *store.ForkSegment) string {
	var b strings.Builder
	line := func(lo string, hi, key int64) {
		b.WriteString(lo)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(hi, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(key, 10))
		b.WriteByte('\n')
	}
	for _, sg := range segs {
		line(strconv.FormatInt(sg.Lo, 10), sg.Hi, sg.Key)
	}
	if tail != nil {
		line(">", tail.Hi, tail.Key)
	}
	return b.String()
}

func decodeSegments(text string) ([]store.ForkSegment, *store.ForkSegment, error) {
	segs := make([]store.ForkSegment, 0, strings.Count(text, "\n"))
	var tail *store.ForkSegment
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" {
			continue
		}
		lo, rest, ok1 := strings.Cut(line, " ")
		hi, key, ok2 := strings.Cut(rest, " ")
		h, err2 := strconv.ParseInt(hi, 10, 64)
		k, err3 := strconv.ParseInt(key, 10, 64)
		if lo == ">" && ok2 && err2 == nil && err3 == nil && tail == nil {
			tail = &store.ForkSegment{Key: k, Hi: h}
			continue
		}
		l, err1 := strconv.ParseInt(lo, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || tail != nil {
			return nil, nil, fmt.Errorf("bad fork chain line %q", line)
		}
		segs = append(segs, store.ForkSegment{Key: k, Lo: l, Hi: h})
	}
	return segs, tail, nil
}

// parentOf returns the chain walks' way to read a parent's link in this transaction.
func (t *Tx) parentOf(ctx context.Context) store.ParentFunc {
	return func(l store.ForkLink) (store.ForkLink, error) {
		p := store.ForkLink{ID: l.ParentID}
		var parent *string
		err := t.Conn.QueryRow(ctx, `SELECT parent_id, fork_seq, session_key FROM sessions WHERE id = ?`, l.ParentID).Scan(&parent, &p.ForkSeq, &p.Key)
		if err != nil {
			return p, t.Wrap(err, "read fork parent of "+l.ID)
		}
		p.ParentID = Text(parent)
		return p, nil
	}
}

// rangeLimit ends the statements of readRanges. SQLite's planner looks at the value bound to a
// bare `LIMIT ?`, so binding it makes a prepared statement parse again at its next run (every
// run); it does not look into a cast, and the plans are the same (EXPLAIN QUERY PLAN).
const rangeLimit = limitArg

// readRanges is the store.RangeFunc of the session as: one query over the ranges, whose rows are
// labelled with as. One range is a plain range of the primary key; several are a VALUES list
// joined to it (shorter to parse than as many OR'ed conditions, and planned as one primary-key
// range per row of the list).
func (t *Tx) readRanges(ctx context.Context, as string) store.RangeFunc {
	return func(ranges []store.ForkSegment, limit int, desc bool) ([]*carryon.Message, error) {
		order := "seq"
		if desc {
			order = "seq DESC"
		}
		scan := func(r Row) (*carryon.Message, error) { return scanMessage(r, as) }
		if len(ranges) == 1 {
			r := ranges[0]
			return scanWithin(t, ctx, "read messages", scan, messageSize, `SELECT `+messageRead+` FROM messages m`+writesJoin+`
				WHERE m.session_key = ? AND m.seq > ? AND m.seq <= ?`+visibleTo+` ORDER BY m.`+order+rangeLimit,
				r.Key, r.Lo, r.Hi, as, Limit(limit))
		}
		var q strings.Builder
		args := make([]any, 0, 3*len(ranges)+2)
		for i, r := range ranges {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString(`(CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT))`)
			args = append(args, r.Key, r.Lo, r.Hi)
		}
		return scanWithin(t, ctx, "read messages", scan, messageSize, `SELECT `+messageRead+` FROM (VALUES `+q.String()+`) AS r
			JOIN messages m ON m.session_key = r.column1 AND m.seq > r.column2 AND m.seq <= r.column3`+writesJoin+`
			WHERE NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = ? AND d.seq = m.seq)
			ORDER BY m.`+order+rangeLimit, append(args, as, Limit(limit))...)
	}
}
