package sqlq

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// AppendEvent stores an event of the owner's run with the run's next seq (one more than its
// highest, from 1) and sets e.Seq. It first reads the run row with Dialect.LockForUpdate, so
// concurrent appenders to one run take turns (where writers are not serialised anyway) and each
// reads the seq its predecessor committed: seqs have no gaps and no duplicates. ENOTFOUND when the
// run is not the owner's.
//
// A transaction that stored an event of the run already (the memo) knows both: the next event
// is one insert.
func (t *Tx) AppendEvent(ctx context.Context, owner string, e *carryon.Event) error {
	if err := t.Writable(); err != nil {
		return err
	}
	seq, known := t.lastEventSeq(owner, e.RunID)
	if known {
		seq++
		if _, err := t.Conn.Exec(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at) VALUES (?, ?, ?, ?, ?)`,
			e.RunID, seq, string(e.Type), NullText(e.Data), Micros(e.CreatedAt)); err != nil {
			return t.Wrap(err, "append event")
		}
	} else {
		if err := t.ownRun(ctx, owner, e.RunID, t.d.LockForUpdate); err != nil {
			return err
		}
		err := t.Conn.QueryRow(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at)
			SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4 FROM run_events WHERE run_id = ?1
			RETURNING seq`, e.RunID, string(e.Type), NullText(e.Data), Micros(e.CreatedAt)).Scan(&seq)
		if err != nil {
			return t.Wrap(err, "append event")
		}
	}
	t.storedEvent(owner, e.RunID, seq)
	e.Seq = seq
	if t.d.NotifyRunEvent != "" && !t.notified[e.RunID] {
		if _, err := t.Conn.Exec(ctx, t.d.NotifyRunEvent, e.RunID); err != nil {
			return t.Wrap(err, "notify run event")
		}
		if t.notified == nil {
			t.notified = map[string]bool{}
		}
		t.notified[e.RunID] = true
	}
	return nil
}

// EventsAfter returns up to limit of the owner's run's events with seq > after, in seq order. A
// limit of zero or less means no limit; a read budget in ctx (store.WithReadBudget) may stop it
// earlier. ENOTFOUND when the run is not the owner's.
func (t *Tx) EventsAfter(ctx context.Context, owner, runID string, after int64, limit int) ([]*carryon.Event, error) {
	if err := t.ownRun(ctx, owner, runID, ""); err != nil {
		return nil, err
	}
	evs, err := scanWithin(t, ctx, "events after", func(r Row) (*carryon.Event, error) {
		e := carryon.Event{RunID: runID}
		var typ string
		var data *string
		var created int64
		if err := r.Scan(&e.Seq, &typ, &data, &created); err != nil {
			return nil, err
		}
		e.Type, e.Data, e.CreatedAt = carryon.EventType(typ), RawText(data), FromMicros(created)
		return &e, nil
	}, eventSize, `SELECT seq, type, data, created_at FROM run_events
		WHERE run_id = ? AND seq > ? ORDER BY seq`+limitArg, runID, after, Limit(limit))
	if errors.Is(err, store.ErrBudgetSpent) {
		err = nil // the reader goes on after the last event it got
	}
	return evs, err
}

// eventSize is what an event read counts against a read budget.
func eventSize(e *carryon.Event) int64 { return int64(len(e.Data)) + 64 }
