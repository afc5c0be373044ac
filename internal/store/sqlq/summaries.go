package sqlq

import (
	"context"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Summaries returns the visible summaries of s, oldest first: one query per segment of its fork
// chain, each reading the partial index messages_summaries (migration 0022), labelled with s.ID
// like the other readers.
func (t *Tx) Summaries(ctx context.Context, owner string, s *carryon.Session) ([]*carryon.Message, error) {
	segs, tail, _, err := t.chainOf(ctx, owner, s)
	if err == nil {
		segs, err = t.expandAll(ctx, s.ID, segs, tail)
	}
	if err != nil {
		return nil, err
	}
	var out []*carryon.Message
	for i := len(segs) - 1; i >= 0; i-- { // the root's first: oldest seqs first
		sg := segs[i]
		scan := func(r Row) (*carryon.Message, error) { return scanMessage(r, s.ID) }
		ms, err := scanAll(t, ctx, "read summaries", scan, `SELECT `+messageRead+` FROM messages m`+writesJoin+`
			WHERE m.session_key = ? AND m.seq > ? AND m.seq <= ? AND m.kind = 'summary'`+visibleTo+` ORDER BY m.seq`,
			sg.Key, sg.Lo, sg.Hi, s.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

var _ store.Messages = (*Tx)(nil)
