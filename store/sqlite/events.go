package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/carryon-hub/carryon"
)

// AppendEvent stores an event of the owner's run with the run's next seq (one more than its
// highest, from 1) and sets e.Seq. Reading the highest seq and inserting happen in one statement
// of a write transaction, and SQLite write transactions are serialised, so seqs have no gaps and
// no duplicates. ENOTFOUND when the run is not the owner's.
func (t *tx) AppendEvent(ctx context.Context, owner string, e *carryon.Event) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var seq int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at)
		SELECT r.id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = r.id), ?, ?, ?
		FROM runs r WHERE r.id = ? AND r.owner_id = ?
		RETURNING seq`, string(e.Type), nullText(e.Data), micros(e.CreatedAt), e.RunID, owner).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("run", e.RunID)
	} else if err != nil {
		return wrap(err, "append event")
	}
	e.Seq = seq
	return nil
}

// EventsAfter returns up to limit of the owner's run's events with seq > after, in seq order. A
// limit of zero or less means no limit. ENOTFOUND when the run is not the owner's.
func (t *tx) EventsAfter(ctx context.Context, owner, runID string, after int64, limit int) ([]*carryon.Event, error) {
	if err := t.ownRun(ctx, owner, runID); err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT seq, type, data, created_at FROM run_events
		WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, after, limitArg(limit))
	if err != nil {
		return nil, wrap(err, "events after")
	}
	defer rows.Close()
	var out []*carryon.Event
	for rows.Next() {
		e := carryon.Event{RunID: runID}
		var typ string
		var data sql.NullString
		var created int64
		if err := rows.Scan(&e.Seq, &typ, &data, &created); err != nil {
			return nil, wrap(err, "events after")
		}
		e.Type, e.Data, e.CreatedAt = carryon.EventType(typ), rawText(data), fromMicros(created)
		out = append(out, &e)
	}
	return out, wrap(rows.Err(), "events after")
}
