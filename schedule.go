package carryon

import (
	"context"
	"time"
)

// Schedule states.
const (
	// ScheduleActive fires at NextFireAt.
	ScheduleActive = "active"
	// SchedulePaused does not fire until resumed; NextFireAt is empty.
	SchedulePaused = "paused"
	// ScheduleDone fires no more: its at time passed, or its next tick would be after Until.
	ScheduleDone = "done"
)

// Overlap policies of a schedule: what a tick does while the session has an active run.
const (
	// OverlapSkip skips the tick (no run).
	OverlapSkip = "skip"
	// OverlapEnqueue queues the tick's run behind the active one, unless a run of the same
	// schedule is still queued (the tick is then skipped: ticks never pile up).
	OverlapEnqueue = "enqueue"
)

// Catch-up policies of a schedule: what happens to ticks missed while no scheduler ran.
const (
	// CatchUpNone skips every missed tick.
	CatchUpNone = "none"
	// CatchUpLatest fires once for the latest missed tick and skips the others.
	CatchUpLatest = "latest"
)

// Schedule outcomes of a tick (Schedule.LastOutcome).
const (
	TickFired         = "fired"           // a run started
	TickSkipOverlap   = "skipped_overlap" // the session had an active run and overlap is skip
	TickSkipQueued    = "skipped_queued"  // a run of this schedule was still queued
	TickMissed        = "missed"          // the tick was late and catch_up is none
	TickSessionClosed = "session_closed"  // the session was closed or expired
	TickFailed        = "failed"          // the run could not start (LastError says why)
)

// DefaultMinScheduleInterval is the shortest every a schedule may have unless the server is
// configured otherwise.
const DefaultMinScheduleInterval = time.Minute

// Schedule starts runs on a session by itself: at the ticks of a cron expression, every interval,
// or once at a time. It belongs to its session's owner and is deleted with the session.
type Schedule struct {
	ID        string `json:"id"`
	SessionID string `json:"session_id"`
	OwnerID   string `json:"owner_id"`
	// Exactly one of Cron (5 fields), Every (a Go duration such as "15m") and At is set.
	Cron  string     `json:"cron,omitempty"`
	Every string     `json:"every,omitempty"`
	At    *time.Time `json:"at,omitempty"`
	// Timezone is the IANA zone the cron fields are read in (default UTC).
	Timezone string `json:"timezone"`
	// Message is the user message each run starts with; Agent the profile it runs (empty: the
	// session's).
	Message string `json:"message"`
	Agent   string `json:"agent,omitempty"`
	// Overlap is skip or enqueue; CatchUp none or latest.
	Overlap string `json:"overlap"`
	CatchUp string `json:"catch_up"`
	// Until, when set, ends the schedule: no tick after it fires.
	Until  *time.Time `json:"until,omitempty"`
	Status string     `json:"status"`
	// NextFireAt is the next tick while active.
	NextFireAt *time.Time `json:"next_fire_at,omitempty"`
	// LastTick is the last tick handled, LastOutcome what it did (fired, skipped_overlap,
	// skipped_queued, missed, session_closed, failed), LastRunID the run it started and
	// LastError why it failed.
	LastTick    *time.Time `json:"last_tick,omitempty"`
	LastOutcome string     `json:"last_outcome,omitempty"`
	LastRunID   string     `json:"last_run_id,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	// Fired counts the runs the schedule's ticks started.
	Fired     int64     `json:"fired"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NewSchedule is the input of ScheduleService.Create.
type NewSchedule struct {
	Cron     string     `json:"cron,omitempty"`
	Every    string     `json:"every,omitempty"`
	At       *time.Time `json:"at,omitempty"`
	Timezone string     `json:"timezone,omitempty"`
	Message  string     `json:"message"`
	Agent    string     `json:"agent,omitempty"`
	// Overlap is skip (default) or enqueue; CatchUp none (default) or latest.
	Overlap string     `json:"overlap,omitempty"`
	CatchUp string     `json:"catch_up,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
	// Paused creates the schedule paused.
	Paused bool `json:"paused,omitempty"`
	RetryOptions
}

// ScheduleUpdate is the input of ScheduleService.Update: the fields given change. A new cron,
// every or at replaces the schedule's spec (give only one); Paused pauses or resumes.
type ScheduleUpdate struct {
	Cron     *string    `json:"cron,omitempty"`
	Every    *string    `json:"every,omitempty"`
	At       *time.Time `json:"at,omitempty"`
	Timezone *string    `json:"timezone,omitempty"`
	Message  *string    `json:"message,omitempty"`
	Agent    *string    `json:"agent,omitempty"`
	Overlap  *string    `json:"overlap,omitempty"`
	CatchUp  *string    `json:"catch_up,omitempty"`
	Until    *time.Time `json:"until,omitempty"`
	Paused   *bool      `json:"paused,omitempty"`
	RetryOptions
}

// ScheduleFilter selects a page of schedules.
type ScheduleFilter struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// SchedulePage is a page of schedules, newest first.
type SchedulePage struct {
	Items      []*Schedule `json:"items"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// ScheduleService owns schedules; every call acts for the user in the context, and another
// user's session or schedule is ENOTFOUND.
type ScheduleService interface {
	// Create adds a schedule to the session. EINVALID for a bad spec, zone, time or interval.
	Create(ctx context.Context, sessionID string, in NewSchedule) (*Schedule, error)
	// Get returns one schedule.
	Get(ctx context.Context, id string) (*Schedule, error)
	// List returns a page of the session's schedules, or of all the caller's when sessionID is empty.
	List(ctx context.Context, sessionID string, f ScheduleFilter) (*SchedulePage, error)
	// Update changes, pauses or resumes a schedule.
	Update(ctx context.Context, id string, in ScheduleUpdate) (*Schedule, error)
	// Delete removes a schedule.
	Delete(ctx context.Context, id string, opt RetryOptions) error
	// RunNow starts a run with the schedule's message now, under its overlap policy (skip:
	// EBUSY while the session has an active run); the ticks do not move.
	RunNow(ctx context.Context, id string, opt RetryOptions) (*Run, error)
}
