package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// ScheduleQuery selects a page of schedules, newest first (CreatedAt descending, then ID
// descending); AfterID empty means the first page. SessionID empty selects all the owner's.
type ScheduleQuery struct {
	SessionID    string
	AfterCreated time.Time
	AfterID      string
	Limit        int
}

// Schedules stores schedules. A schedule is deleted with its session (and so with its owner when
// the owner is forgotten).
type Schedules interface {
	// InsertSchedule stores a new schedule. ENOTFOUND when the session is not s.OwnerID's.
	InsertSchedule(ctx context.Context, s *carryon.Schedule) error
	// GetSchedule returns the owner's schedule; inside Write it locks the row to the end of the
	// transaction. ENOTFOUND when missing or foreign.
	GetSchedule(ctx context.Context, owner, id string) (*carryon.Schedule, error)
	// UpdateSchedule stores every mutable field of s (spec, zone, message, agent, policies,
	// until, status, next fire, last tick, outcome, run, error, fired count, updated time).
	// ENOTFOUND when missing or not s.OwnerID's.
	UpdateSchedule(ctx context.Context, s *carryon.Schedule) error
	// DeleteSchedule removes the owner's schedule. ENOTFOUND.
	DeleteSchedule(ctx context.Context, owner, id string) error
	// ListSchedules returns a page of the owner's schedules.
	ListSchedules(ctx context.Context, owner string, q ScheduleQuery) ([]*carryon.Schedule, error)
	// DueSchedules returns, across owners and soonest first, up to limit active schedules whose
	// NextFireAt is at or before now. For the scheduler only. In a write transaction, drivers
	// that lock rows lock the schedules they return and skip those other transactions hold
	// (PostgreSQL: FOR NO KEY UPDATE SKIP LOCKED), so schedulers claiming at once take
	// different schedules, and each tick is claimed by one of them.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]*carryon.Schedule, error)
}
