package schedules

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/webhooks"
)

// EventScheduleFired is the event a tick's run journals after run.queued: the schedule, the
// tick and whether it was late.
const EventScheduleFired carryon.EventType = "schedule.fired"

// maxClaims bounds the schedules one Tick claims, so that a scheduler returns to its loop.
const maxClaims = 1000

// Run fires due schedules until ctx ends, looking every Config.Poll.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("scheduler", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick claims every schedule due at the clock's now, one transaction each, and returns how many
// runs it started. Instances may call it at once: each due tick is claimed by one of them.
func (s *Service) Tick(ctx context.Context) (int, error) {
	fired := 0
	// A read first: an idle scheduler commits nothing.
	var due []*carryon.Schedule
	if err := s.st.Read(ctx, func(tx store.Tx) error {
		var err error
		due, err = tx.DueSchedules(ctx, s.now(), 1)
		return err
	}); err != nil || len(due) == 0 {
		return 0, err
	}
	for range maxClaims {
		c, err := s.claimOne(ctx)
		if err != nil {
			return fired, err
		}
		if c == nil {
			return fired, nil
		}
		s.cfg.Telemetry.ScheduleTick(c.outcome, c.late)
		if c.run != nil {
			fired++
			s.runs.Started(c.run.ID)
		}
	}
	return fired, nil
}

// claim is what claiming one schedule did.
type claim struct {
	outcome string
	late    int
	run     *carryon.Run
}

// claimOne claims the soonest due schedule, if any, and handles its tick in the same
// transaction. When that transaction fails, a second one records the failure and moves the
// schedule on, so that a schedule that cannot fire does not hold the scheduler.
func (s *Service) claimOne(ctx context.Context) (*claim, error) {
	var c *claim
	var failed *carryon.Schedule
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c, failed = nil, nil
		due, err := tx.DueSchedules(ctx, s.now(), 1)
		if err != nil || len(due) == 0 {
			return err
		}
		failed = due[0]
		c, err = s.fire(ctx, tx, due[0], s.now())
		return err
	})
	if err == nil || failed == nil || ctx.Err() != nil {
		return c, err
	}
	s.log.Error("schedule tick", "schedule", failed.ID, "err", err)
	msg := err.Error()
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		sc, err := tx.GetSchedule(ctx, failed.OwnerID, failed.ID)
		if err != nil || sc.NextFireAt == nil || !sc.NextFireAt.Equal(*failed.NextFireAt) {
			return err // gone, or another scheduler handled the tick
		}
		now := s.now()
		sp, perr := parseSpec(sc, 0)
		var next time.Time
		ok := false
		if perr == nil {
			_, next, ok, _ = sp.latest(*sc.NextFireAt, now)
		}
		s.advance(sc, *sc.NextFireAt, next, ok, now)
		sc.LastOutcome, sc.LastError, sc.LastRunID = carryon.TickFailed, msg, ""
		c = &claim{outcome: carryon.TickFailed}
		return tx.UpdateSchedule(ctx, sc)
	})
	return c, err
}

// advance records tick as handled and sets the next one (none: the schedule is done).
func (s *Service) advance(sc *carryon.Schedule, tick, next time.Time, ok bool, now time.Time) {
	t := tick
	sc.LastTick, sc.UpdatedAt = &t, now
	if ok {
		sc.NextFireAt = &next
	} else {
		sc.NextFireAt, sc.Status = nil, carryon.ScheduleDone
	}
}

// fire handles the due tick of sc at now in tx: it finds the latest tick at or before now (the
// ones before it are missed), lets the catch-up, session and overlap rules decide, starts the
// tick's run under the tick's request id, and moves the schedule to its next tick.
func (s *Service) fire(ctx context.Context, tx store.Tx, sc *carryon.Schedule, now time.Time) (*claim, error) {
	sp, err := parseSpec(sc, 0)
	if err != nil {
		sc.Status, sc.NextFireAt, sc.LastOutcome, sc.LastError, sc.UpdatedAt = carryon.ScheduleDone, nil, carryon.TickFailed, err.Error(), now
		return &claim{outcome: carryon.TickFailed}, tx.UpdateSchedule(ctx, sc)
	}
	tick, next, ok, skipped := sp.latest(*sc.NextFireAt, now)
	late := now.Sub(tick) > s.cfg.LateAfter
	c := &claim{late: skipped}
	if late {
		c.late++
	}
	c.outcome, err = s.decide(ctx, tx, sc, tick, late, now)
	if err != nil {
		return nil, err
	}
	sc.LastOutcome, sc.LastError = c.outcome, ""
	if c.outcome == carryon.TickFired {
		run, err := s.start(ctx, tx, sc, tick, late, now)
		switch {
		case err == nil:
			c.run = run
			sc.LastRunID = run.ID
			sc.Fired++
		case isRefusal(err):
			c.outcome, sc.LastOutcome, sc.LastError = carryon.TickFailed, carryon.TickFailed, err.Error()
		default:
			return nil, err
		}
	}
	s.advance(sc, tick, next, ok, now)
	return c, tx.UpdateSchedule(ctx, sc)
}

// isRefusal tells a rule's refusal (the run cannot start: an unknown agent, a closed session),
// which is the tick's outcome, from a failure of the database, which fails the claim.
func isRefusal(err error) bool {
	var ce *carryon.Error
	return errors.As(err, &ce) && ce.Code != carryon.EINTERNAL && ce.Code != carryon.EUNAVAILABLE
}

// decide says what the tick does: fired (start the run) or why not.
func (s *Service) decide(ctx context.Context, tx store.Tx, sc *carryon.Schedule, tick time.Time, late bool, now time.Time) (string, error) {
	if late && sc.CatchUp == carryon.CatchUpNone {
		return carryon.TickMissed, nil
	}
	if err := tx.LockOwner(ctx, sc.OwnerID); err != nil {
		if carryon.ErrorCode(err) == carryon.EUNAUTHORIZED {
			return carryon.TickSessionClosed, nil // the owner is being forgotten
		}
		return "", err
	}
	if err := tx.LockSession(ctx, sc.OwnerID, sc.SessionID); err != nil {
		return "", err
	}
	sess, err := tx.GetSession(ctx, sc.OwnerID, sc.SessionID)
	if err != nil {
		return "", err
	}
	if sess.Status != carryon.SessionActive || !sess.ExpiresAt.After(now) {
		return carryon.TickSessionClosed, nil
	}
	active, err := tx.ActiveRuns(ctx, sc.OwnerID, sc.SessionID)
	if err != nil || len(active) == 0 {
		return carryon.TickFired, err
	}
	if sc.Overlap == carryon.OverlapSkip {
		return carryon.TickSkipOverlap, nil
	}
	for _, r := range active {
		if r.Status == carryon.RunQueued && strings.HasPrefix(r.RequestID, "schedule:"+sc.ID+":") {
			return carryon.TickSkipQueued, nil
		}
	}
	return carryon.TickFired, nil
}

// start starts the run of sc's tick in tx under the tick's request id, journals schedule.fired
// in it, queues that event for the webhooks that subscribe to it, and records the request id. A tick whose request id is taken already started its run:
// that run is the answer, and nothing starts twice.
func (s *Service) start(ctx context.Context, tx store.Tx, sc *carryon.Schedule, tick time.Time, late bool, now time.Time) (*carryon.Run, error) {
	key := tickKey(sc.ID, tick)
	if rec, err := tx.GetIdempotency(ctx, sc.OwnerID, key); err == nil {
		var run carryon.Run
		if err := json.Unmarshal(rec.Result, &run); err != nil {
			return nil, err
		}
		return &run, nil
	} else if carryon.ErrorCode(err) != carryon.ENOTFOUND {
		return nil, err
	}
	policy := carryon.MultitaskReject
	if sc.Overlap == carryon.OverlapEnqueue {
		policy = carryon.MultitaskEnqueue
	}
	data := map[string]any{"schedule_id": sc.ID, "tick": tick, "late": late}
	run, err := s.runs.StartInTx(carryon.NewContextWithDoor(ctx, carryon.DoorSchedule), tx, sc.OwnerID, sc.SessionID, carryon.NewRun{Message: sc.Message, Agent: sc.Agent,
		Metadata: mustJSON(data)}, policy, key, now)
	if err != nil {
		return nil, err
	}
	if err := tx.AppendEvent(ctx, sc.OwnerID, &carryon.Event{RunID: run.ID, Type: EventScheduleFired, Data: mustJSON(data), CreatedAt: now}); err != nil {
		return nil, err
	}
	// The webhooks' outbox rows, in the claim's transaction: one per tick, as the run.
	if _, err := tx.EnqueueWebhookEvent(ctx, webhooks.ScheduleEvent(sc.ID, tick, run, now)); err != nil {
		return nil, err
	}
	return run, tx.PutIdempotency(ctx, &store.IdempotencyRecord{OwnerID: sc.OwnerID, Key: key, SessionID: sc.SessionID,
		Fingerprint: "schedule.tick " + sc.ID, State: store.IdemDone, Result: mustJSON(run), CreatedAt: now, ExpiresAt: now.Add(s.cfg.RequestIDTTL)})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // not reached: maps of strings, times and runs
	}
	return b
}
