package sqlq

import (
	"context"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

const scheduleCols = `id, session_id, owner_id, kind, spec, timezone, message, agent, overlap, catch_up, until_at,
	status, next_fire_at, last_tick, last_outcome, last_run_id, last_error, fired, created_at, updated_at`

// scheduleSpec is the stored kind and spec of a schedule: exactly one of its Cron, Every and At.
func scheduleSpec(s *carryon.Schedule) (kind, spec string) {
	switch {
	case s.Cron != "":
		return "cron", s.Cron
	case s.Every != "":
		return "every", s.Every
	case s.At != nil:
		return "at", s.At.UTC().Format(time.RFC3339Nano)
	}
	return "", ""
}

func scanSchedule(r Row) (*carryon.Schedule, error) {
	var s carryon.Schedule
	var kind, spec string
	var until, next, last *int64
	var created, updated int64
	err := r.Scan(&s.ID, &s.SessionID, &s.OwnerID, &kind, &spec, &s.Timezone, &s.Message, &s.Agent, &s.Overlap,
		&s.CatchUp, &until, &s.Status, &next, &last, &s.LastOutcome, &s.LastRunID, &s.LastError, &s.Fired, &created, &updated)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "cron":
		s.Cron = spec
	case "every":
		s.Every = spec
	case "at":
		at, err := time.Parse(time.RFC3339Nano, spec)
		if err != nil {
			return nil, err
		}
		at = at.UTC()
		s.At = &at
	}
	s.Until, s.NextFireAt, s.LastTick = TimePtr(until), TimePtr(next), TimePtr(last)
	s.CreatedAt, s.UpdatedAt = FromMicros(created), FromMicros(updated)
	return &s, nil
}

// InsertSchedule stores a new schedule. ENOTFOUND when the session is not s.OwnerID's.
func (t *Tx) InsertSchedule(ctx context.Context, s *carryon.Schedule) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if err := t.ownSession(ctx, s.OwnerID, s.SessionID); err != nil {
		return err
	}
	kind, spec := scheduleSpec(s)
	_, err := t.Conn.Exec(ctx, `INSERT INTO schedules (`+scheduleCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.SessionID, s.OwnerID, kind, spec, s.Timezone, s.Message, s.Agent, s.Overlap, s.CatchUp,
		NullMicros(s.Until), s.Status, NullMicros(s.NextFireAt), NullMicros(s.LastTick), s.LastOutcome,
		s.LastRunID, s.LastError, s.Fired, Micros(s.CreatedAt), Micros(s.UpdatedAt))
	return t.Conflict(err, "insert schedule", "schedule %s exists", s.ID)
}

// GetSchedule returns the owner's schedule, locking its row inside Write. ENOTFOUND.
func (t *Tx) GetSchedule(ctx context.Context, owner, id string) (*carryon.Schedule, error) {
	s, err := scanSchedule(t.Conn.QueryRow(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ? AND owner_id = ?`+
		t.lockIfWriting(t.d.LockForUpdate), id, owner))
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("schedule", id)
	}
	return s, t.Wrap(err, "get schedule")
}

// UpdateSchedule stores every mutable field of s. ENOTFOUND when missing or not s.OwnerID's.
func (t *Tx) UpdateSchedule(ctx context.Context, s *carryon.Schedule) error {
	if err := t.Writable(); err != nil {
		return err
	}
	kind, spec := scheduleSpec(s)
	n, err := t.Conn.Exec(ctx, `UPDATE schedules SET kind = ?, spec = ?, timezone = ?, message = ?, agent = ?,
		overlap = ?, catch_up = ?, until_at = ?, status = ?, next_fire_at = ?, last_tick = ?, last_outcome = ?,
		last_run_id = ?, last_error = ?, fired = ?, updated_at = ? WHERE id = ? AND owner_id = ?`,
		kind, spec, s.Timezone, s.Message, s.Agent, s.Overlap, s.CatchUp, NullMicros(s.Until), s.Status,
		NullMicros(s.NextFireAt), NullMicros(s.LastTick), s.LastOutcome, s.LastRunID, s.LastError, s.Fired,
		Micros(s.UpdatedAt), s.ID, s.OwnerID)
	if err != nil {
		return t.Wrap(err, "update schedule")
	}
	if n == 0 {
		return NotFound("schedule", s.ID)
	}
	return nil
}

// DeleteSchedule removes the owner's schedule. ENOTFOUND.
func (t *Tx) DeleteSchedule(ctx context.Context, owner, id string) error {
	if err := t.Writable(); err != nil {
		return err
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM schedules WHERE id = ? AND owner_id = ?`, id, owner)
	if err != nil {
		return t.Wrap(err, "delete schedule")
	}
	if n == 0 {
		return NotFound("schedule", id)
	}
	return nil
}

// ListSchedules returns a page of the owner's schedules (of one session when q.SessionID is set).
func (t *Tx) ListSchedules(ctx context.Context, owner string, q store.ScheduleQuery) ([]*carryon.Schedule, error) {
	query := `SELECT ` + scheduleCols + ` FROM schedules WHERE owner_id = ?`
	args := []any{owner}
	if q.SessionID != "" {
		query += ` AND session_id = ?`
		args = append(args, q.SessionID)
	}
	if q.AfterID != "" {
		query += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, Micros(q.AfterCreated), Micros(q.AfterCreated), q.AfterID)
	}
	query += ` ORDER BY created_at DESC, id DESC` + limitArg
	return scanAll(t, ctx, "list schedules", scanSchedule, query, append(args, Limit(q.Limit))...)
}

// DueSchedules returns up to limit active schedules due at now, soonest first, locked and
// skipping those other writers hold where the database locks rows.
func (t *Tx) DueSchedules(ctx context.Context, now time.Time, limit int) ([]*carryon.Schedule, error) {
	return scanAll(t, ctx, "due schedules", scanSchedule, `SELECT `+scheduleCols+` FROM schedules r
		WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? AND status = 'active'
		ORDER BY next_fire_at, id`+limitArg+t.lockIfWriting(t.d.LockToClaim), Micros(now), Limit(limit))
}
