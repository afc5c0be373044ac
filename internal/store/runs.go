package store

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
)

// RunQuery selects a page of one session's runs, newest first (CreatedAt descending, then ID
// descending); AfterID empty means the first page.
type RunQuery struct {
	AfterCreated time.Time
	AfterID      string
	Limit        int
}

// Runs stores runs, their tool journal and events. Every method but the system
// runner's RunnableRuns takes the owner (UpdateRun and InsertRun read it from the run) and answers
// ENOTFOUND for another owner's rows, exactly as for missing ones.
type Runs interface {
	// InsertRun stores a new run. ENOTFOUND when the session is not the owner's.
	InsertRun(ctx context.Context, r *carryon.Run) error
	// GetRun returns the owner's run. ENOTFOUND.
	GetRun(ctx context.Context, owner, id string) (*carryon.Run, error)
	// UpdateRun stores every mutable field of r (status, trigger seq, step, attempt, lease, stop
	// request, reply, error, usage,
	// times) if the stored row is at attempt prevAttempt: a runner that lost its run cannot write.
	// ENOTFOUND; EFENCED when the attempt moved.
	UpdateRun(ctx context.Context, r *carryon.Run, prevAttempt int) error
	// ListRuns returns a page of a session's runs.
	ListRuns(ctx context.Context, owner, sessionID string, q RunQuery) ([]*carryon.Run, error)
	// ActiveRuns returns the session's runs that are queued, running or waiting (for approval or
	// for tool outputs), oldest first.
	ActiveRuns(ctx context.Context, owner, sessionID string) ([]*carryon.Run, error)
	// RunnableRuns returns, across owners, up to limit runs a runner may take now: the oldest
	// queued run of each session that has no running or waiting run, and running runs whose lease
	// expired before now. For the system runner only. In a write transaction, drivers that lock
	// rows lock the runs they return and skip runs other transactions hold (PostgreSQL: FOR NO
	// KEY UPDATE SKIP LOCKED), so runners claiming at once take different runs.
	RunnableRuns(ctx context.Context, now time.Time, limit int) ([]*carryon.Run, error)
	// StaleRequiresAction returns, across owners and oldest first, up to limit runs that have
	// waited in requires_action since before the given time (updated_at). For the system runner
	// only, which fails them.
	StaleRequiresAction(ctx context.Context, before time.Time, limit int) ([]*carryon.Run, error)
	// ActiveRunCounts returns, across owners, how many runs are in each active state (queued,
	// running, waiting_approval, requires_action); a state without runs is absent. For the
	// metrics only: it reads the active runs' index, never the finished runs.
	ActiveRunCounts(ctx context.Context) (map[carryon.RunStatus]int64, error)

	// InsertAction journals a tool call of the owner's run a.RunID in session a.SessionID.
	// ENOTFOUND when the run is not the owner's or not of that session; ECONFLICT when (run,
	// step, index) exists.
	InsertAction(ctx context.Context, owner string, a *carryon.Action) error
	// UpdateAction stores the action's status, attempt, fingerprints, result, error and finish
	// time, if it is the action a.ID of the owner's run a.RunID. ENOTFOUND otherwise.
	UpdateAction(ctx context.Context, owner string, a *carryon.Action) error
	// ListActions returns a run's actions by step and index. ENOTFOUND when the run is not the owner's.
	ListActions(ctx context.Context, owner, runID string) ([]*carryon.Action, error)
	// StepActions returns the actions of one step of a run by index (the engine resuming a step).
	// ENOTFOUND when the run is not the owner's.
	StepActions(ctx context.Context, owner, runID string, step int) ([]*carryon.Action, error)
	// RecentActions returns the session's last limit actions, newest first.
	RecentActions(ctx context.Context, owner, sessionID string, limit int) ([]*carryon.Action, error)
	// LastToolAction returns the session's newest action of the tool called name that recorded a
	// fingerprint after its call, or nil. ENOTFOUND when the session is not the owner's.
	LastToolAction(ctx context.Context, owner, sessionID, name string) (*carryon.Action, error)

	// AppendEvent stores an event of the owner's run e.RunID with the run's next seq, which it
	// sets on e. ENOTFOUND when the run is not the owner's.
	AppendEvent(ctx context.Context, owner string, e *carryon.Event) error
	// EventsAfter returns up to limit of the owner's run events with seq > after, in order.
	EventsAfter(ctx context.Context, owner, runID string, after int64, limit int) ([]*carryon.Event, error)
}
