// Package schedules owns schedules, the runs a session starts by itself (at the ticks of a
// cron expression read in an IANA time zone, every interval, or once at a time), and the
// scheduler that fires them.
//
// Exactly one run per tick: the scheduler of every instance claims a due schedule in a write
// transaction (PostgreSQL: FOR NO KEY UPDATE SKIP LOCKED, so instances take different schedules;
// SQLite: its one writer) that also starts the tick's run, under a request id derived from the
// schedule and the tick, and moves the schedule's next fire time on. A claim that does not
// commit leaves the tick to the next claim; one that commits cannot be repeated, since the tick
// is no longer due and its request id is taken. After downtime the catch-up policy fires at
// most the latest missed tick.
//
// Cron expressions are parsed by github.com/robfig/cron/v3 (the standard 5 fields and the
// @daily-style descriptors).
package schedules

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/runs"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
)

// Config holds the schedules' settings; zero values take the defaults.
type Config struct {
	// Now is the clock (default time.Now); the scheduler's tests set it.
	Now func() time.Time
	// MinInterval is the shortest every allowed (default carryon.DefaultMinScheduleInterval).
	MinInterval time.Duration
	// LateAfter is how late a tick may be claimed and still count as on time (default one
	// minute): a later one is a missed tick, which catch_up decides about.
	LateAfter time.Duration
	// Poll is how often the scheduler looks for due schedules (default one second).
	Poll time.Duration
	// RequestIDTTL is how long a tick's request id is kept (default carryon.DefaultIdempotencyTTL).
	RequestIDTTL time.Duration
	// Logger receives the scheduler's logs.
	Logger *slog.Logger
	// Telemetry counts the ticks; nil for none.
	Telemetry *telemetry.Telemetry
}

// Service implements carryon.ScheduleService and runs the scheduler (Run, Tick).
type Service struct {
	st   store.Store
	runs *runs.Service
	cfg  Config
	log  *slog.Logger
}

var _ carryon.ScheduleService = (*Service)(nil)

// New returns the schedules over st, starting their runs with rs.
func New(st store.Store, rs *runs.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MinInterval <= 0 {
		cfg.MinInterval = carryon.DefaultMinScheduleInterval
	}
	if cfg.LateAfter <= 0 {
		cfg.LateAfter = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.RequestIDTTL <= 0 {
		cfg.RequestIDTTL = carryon.DefaultIdempotencyTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, runs: rs, cfg: cfg, log: cfg.Logger}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

func owner(ctx context.Context) (string, error) {
	if id := carryon.UserIDFromContext(ctx); id != "" {
		return id, nil
	}
	return "", carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
}

// write runs fn under the caller's request id (op and target name the request).
func write[T any](ctx context.Context, s *Service, op, target, requestID string, input any, fn func(tx store.Tx, own string, now time.Time) (T, error)) (T, error) {
	own, err := owner(ctx)
	if err != nil {
		return *new(T), err
	}
	now := s.now()
	req := idempotency.Request{Owner: own, ID: requestID, Op: op, Target: target, Input: input, Now: now, TTL: s.cfg.RequestIDTTL,
		Session: func(out any) string {
			switch v := out.(type) {
			case *carryon.Schedule:
				if v != nil {
					return v.SessionID
				}
			case *carryon.Run:
				if v != nil {
					return v.SessionID
				}
			}
			return ""
		}}
	return idempotency.Write(ctx, s.st, req, func(tx store.Tx) (T, error) { return fn(tx, own, now) })
}

// policies checks and defaults the overlap and catch-up policies.
func policies(overlap, catchUp string) (string, string, error) {
	switch overlap {
	case "":
		overlap = carryon.OverlapSkip
	case carryon.OverlapSkip, carryon.OverlapEnqueue:
	default:
		return "", "", carryon.Errorf(carryon.EINVALID, "overlap must be skip or enqueue, not %q", overlap)
	}
	switch catchUp {
	case "":
		catchUp = carryon.CatchUpNone
	case carryon.CatchUpNone, carryon.CatchUpLatest:
	default:
		return "", "", carryon.Errorf(carryon.EINVALID, "catch_up must be none or latest, not %q", catchUp)
	}
	return overlap, catchUp, nil
}

// arm checks sc's timing at now and sets its zone, status and next fire time: paused schedules
// keep no next fire time. EINVALID with the reason.
func (s *Service) arm(sc *carryon.Schedule, paused bool, now time.Time) error {
	if err := carryon.CheckText("message", sc.Message); err != nil || strings.TrimSpace(sc.Message) == "" {
		return carryon.Errorf(carryon.EINVALID, "message must be a non-empty UTF-8 string without NUL characters")
	}
	if sc.Timezone == "" {
		sc.Timezone = "UTC"
	}
	sp, err := parseSpec(sc, s.cfg.MinInterval)
	if err != nil {
		return err
	}
	if sc.At != nil && !sc.At.After(now) {
		return carryon.Errorf(carryon.EINVALID, "at %s is in the past (now is %s)", sc.At.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
	}
	if sc.Until != nil && !sc.Until.After(now) {
		return carryon.Errorf(carryon.EINVALID, "until %s is in the past (now is %s)", sc.Until.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
	}
	next, ok := sp.next(now)
	if !ok {
		return carryon.Errorf(carryon.EINVALID, "the schedule has no tick before until")
	}
	sc.NextFireAt, sc.Status = &next, carryon.ScheduleActive
	if paused {
		sc.NextFireAt, sc.Status = nil, carryon.SchedulePaused
	}
	return nil
}

// Create adds a schedule to the caller's session.
func (s *Service) Create(ctx context.Context, sessionID string, in carryon.NewSchedule) (*carryon.Schedule, error) {
	key := in.RequestID
	in.RequestID = ""
	overlap, catchUp, err := policies(in.Overlap, in.CatchUp)
	if err != nil {
		return nil, err
	}
	return write(ctx, s, "schedule.create", sessionID, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Schedule, error) {
		if err := tx.LockOwner(ctx, own); err != nil {
			return nil, err
		}
		sc := &carryon.Schedule{ID: carryon.NewID("sch_"), SessionID: sessionID, OwnerID: own, Cron: in.Cron, Every: in.Every,
			At: utc(in.At), Timezone: in.Timezone, Message: in.Message, Agent: in.Agent, Overlap: overlap, CatchUp: catchUp,
			Until: utc(in.Until), CreatedAt: now, UpdatedAt: now}
		if _, err := tx.GetSession(ctx, own, sessionID); err != nil {
			return nil, err
		}
		if err := s.arm(sc, in.Paused, now); err != nil {
			return nil, err
		}
		return sc, tx.InsertSchedule(ctx, sc)
	})
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	return &u
}

// Get returns one of the caller's schedules.
func (s *Service) Get(ctx context.Context, id string) (*carryon.Schedule, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	var sc *carryon.Schedule
	err = s.st.Read(ctx, func(tx store.Tx) error {
		sc, err = tx.GetSchedule(ctx, own, id)
		return err
	})
	return sc, err
}

// List returns a page of the session's schedules, or of all the caller's.
func (s *Service) List(ctx context.Context, sessionID string, f carryon.ScheduleFilter) (*carryon.SchedulePage, error) {
	own, err := owner(ctx)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = carryon.DefaultPageSize
	}
	q := store.ScheduleQuery{SessionID: sessionID, Limit: limit + 1}
	if f.Cursor != "" {
		if q.AfterCreated, q.AfterID, err = decodeCursor(f.Cursor); err != nil {
			return nil, err
		}
	}
	page := &carryon.SchedulePage{Items: []*carryon.Schedule{}}
	err = s.st.Read(ctx, func(tx store.Tx) error {
		if sessionID != "" {
			if _, err := tx.GetSession(ctx, own, sessionID); err != nil {
				return err
			}
		}
		list, err := tx.ListSchedules(ctx, own, q)
		if err != nil {
			return err
		}
		if len(list) > limit {
			list = list[:limit]
			last := list[limit-1]
			page.NextCursor = encodeCursor(last.CreatedAt, last.ID)
		}
		page.Items = append(page.Items, list...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

func encodeCursor(t time.Time, id string) string {
	b := binary.BigEndian.AppendUint64(nil, uint64(t.UnixMicro()))
	return base64.RawURLEncoding.EncodeToString(append(b, id...))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) <= 8 {
		return time.Time{}, "", carryon.Errorf(carryon.EINVALID, "cursor %q is not a cursor of this listing", c)
	}
	return time.UnixMicro(int64(binary.BigEndian.Uint64(b[:8]))).UTC(), string(b[8:]), nil
}

// Update changes, pauses or resumes a schedule. A change of timing, or a resume, computes the
// next tick from now: ticks missed while paused are not caught up.
func (s *Service) Update(ctx context.Context, id string, in carryon.ScheduleUpdate) (*carryon.Schedule, error) {
	key := in.RequestID
	in.RequestID = ""
	return write(ctx, s, "schedule.update", id, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Schedule, error) {
		sc, err := tx.GetSchedule(ctx, own, id)
		if err != nil {
			return nil, err
		}
		specs := 0
		for _, set := range []bool{in.Cron != nil, in.Every != nil, in.At != nil} {
			if set {
				specs++
			}
		}
		if specs > 1 {
			return nil, carryon.Errorf(carryon.EINVALID, "give at most one of cron, every and at")
		}
		retime := specs == 1 || in.Timezone != nil || in.Until != nil
		if specs == 1 {
			sc.Cron, sc.Every, sc.At = "", "", nil
			switch {
			case in.Cron != nil:
				sc.Cron = *in.Cron
			case in.Every != nil:
				sc.Every = *in.Every
			default:
				sc.At = utc(in.At)
			}
		}
		set(&sc.Timezone, in.Timezone)
		set(&sc.Message, in.Message)
		set(&sc.Agent, in.Agent)
		if in.Until != nil {
			sc.Until = utc(in.Until)
		}
		overlap, catchUp := sc.Overlap, sc.CatchUp
		set(&overlap, in.Overlap)
		set(&catchUp, in.CatchUp)
		if sc.Overlap, sc.CatchUp, err = policies(overlap, catchUp); err != nil {
			return nil, err
		}
		paused := sc.Status == carryon.SchedulePaused
		if in.Paused != nil {
			retime = retime || paused != *in.Paused || sc.Status == carryon.ScheduleDone
			paused = *in.Paused
		}
		if retime || in.Message != nil {
			if sc.Status == carryon.ScheduleDone && !retime {
				return nil, carryon.Errorf(carryon.EINVALID, "schedule %s is done; give it a new cron, every or at to use it again", id)
			}
			if err := s.arm(sc, paused, now); err != nil {
				return nil, err
			}
		}
		sc.UpdatedAt = now
		return sc, tx.UpdateSchedule(ctx, sc)
	})
}

func set(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// Delete removes a schedule; a run it started goes on.
func (s *Service) Delete(ctx context.Context, id string, opt carryon.RetryOptions) error {
	_, err := write(ctx, s, "schedule.delete", id, opt.RequestID, struct{}{}, func(tx store.Tx, own string, _ time.Time) (struct{}, error) {
		return struct{}{}, tx.DeleteSchedule(ctx, own, id)
	})
	return err
}

// RunNow starts a run with the schedule's message and agent now, under its overlap policy: skip
// refuses with EBUSY while the session has an active run, enqueue queues the run. It works on a
// paused or done schedule too, and moves none of its ticks.
func (s *Service) RunNow(ctx context.Context, id string, opt carryon.RetryOptions) (*carryon.Run, error) {
	run, err := write(ctx, s, "schedule.run", id, opt.RequestID, struct{}{}, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		sc, err := tx.GetSchedule(ctx, own, id)
		if err != nil {
			return nil, err
		}
		if err := tx.LockSession(ctx, own, sc.SessionID); err != nil {
			return nil, err
		}
		policy := carryon.MultitaskReject
		if sc.Overlap == carryon.OverlapEnqueue {
			policy = carryon.MultitaskEnqueue
		}
		return s.runs.StartInTx(carryon.NewContextWithDoor(ctx, carryon.DoorSchedule), tx, own, sc.SessionID, carryon.NewRun{Message: sc.Message, Agent: sc.Agent,
			Metadata: mustJSON(map[string]any{"schedule_id": sc.ID, "run_now": true})}, policy, opt.RequestID, now)
	})
	if err != nil {
		return nil, err
	}
	s.runs.Started(run.ID)
	return run, nil
}

// tickKey is the request id of the run of a schedule's tick.
func tickKey(scheduleID string, tick time.Time) string {
	return fmt.Sprintf("schedule:%s:%d", scheduleID, tick.UnixMicro())
}
