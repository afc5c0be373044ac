package postgres

import (
	"context"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/jackc/pgx/v5"
)

// AppendEvent stores an event of the owner's run with the run's next seq (one more than its
// highest, from 1) and sets e.Seq. It first locks the run row (FOR NO KEY UPDATE), so concurrent
// appenders to one run take turns and each reads the seq its predecessor committed: seqs have no
// gaps and no duplicates. ENOTFOUND when the run is not the owner's.
func (t *tx) AppendEvent(ctx context.Context, owner string, e *carryon.Event) error {
	if err := t.Writable(); err != nil {
		return err
	}
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM runs WHERE id = $1 AND owner_id = $2 FOR NO KEY UPDATE`, e.RunID, owner).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("run", e.RunID)
	} else if err != nil {
		return wrap(err, "append event")
	}
	var seq int64
	err = t.tx.QueryRow(ctx, `INSERT INTO run_events (run_id, seq, type, data, created_at)
		SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4 FROM run_events WHERE run_id = $1
		RETURNING seq`, e.RunID, string(e.Type), nullText(e.Data), micros(e.CreatedAt)).Scan(&seq)
	if err != nil {
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
	rows, err := t.tx.Query(ctx, `SELECT seq, type, data, created_at FROM run_events
		WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, runID, after, limitArg(limit))
	if err != nil {
		return nil, wrap(err, "events after")
	}
	defer rows.Close()
	var out []*carryon.Event
	for rows.Next() {
		e := carryon.Event{RunID: runID}
		var typ string
		var data *string
		var created int64
		if err := rows.Scan(&e.Seq, &typ, &data, &created); err != nil {
			return nil, wrap(err, "events after")
		}
		e.Type, e.Data, e.CreatedAt = carryon.EventType(typ), rawText(data), fromMicros(created)
		out = append(out, &e)
	}
	return out, wrap(rows.Err(), "events after")
}
