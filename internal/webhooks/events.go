// Package webhooks delivers run events to the URLs users subscribe (issue 26) as the Standard
// Webhooks specification says: an outbox row per event and webhook, written in the transaction
// that changes the run (RunEvent, store.Webhooks.EnqueueWebhookEvent); a worker in every
// instance that leases due rows, signs them (webhook-id, webhook-timestamp, webhook-signature:
// HMAC-SHA256 over id.timestamp.body with each valid whsec_ secret) and POSTs them through a
// dialer that refuses private addresses, retrying with exponential backoff and jitter for a
// bounded time; and the Service behind /v1/webhooks (create, list, get, patch, delete, rotate,
// the delivery log and redeliver).
package webhooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The event types a webhook may subscribe to: a run that ended, or that waits for its client,
// and a schedule's tick that started a run.
const (
	RunCompleted       = "run.completed"
	RunFailed          = "run.failed"
	RunCancelled       = "run.cancelled"
	RunInterrupted     = "run.interrupted"
	RunRequiresAction  = "run.requires_action"
	RunWaitingApproval = "run.waiting_approval"
	ScheduleFired      = "schedule.fired"
)

// EventTypes lists every event type, in the order the docs give them.
var EventTypes = []string{RunCompleted, RunFailed, RunCancelled, RunInterrupted, RunRequiresAction, RunWaitingApproval, ScheduleFired}

// Known says whether typ is an event type.
func Known(typ string) bool { return slices.Contains(EventTypes, typ) }

// EventType is the event type of a run that moved to status, or "" for a status without one.
func EventType(status carryon.RunStatus) string {
	switch status {
	case carryon.RunSucceeded:
		return RunCompleted
	case carryon.RunFailed:
		return RunFailed
	case carryon.RunCancelled:
		return RunCancelled
	case carryon.RunInterrupted:
		return RunInterrupted
	case carryon.RunRequiresAction:
		return RunRequiresAction
	case carryon.RunWaitingApproval:
		return RunWaitingApproval
	}
	return ""
}

// RunData is the data of a run event: which run, in which state. It carries no message text
// (the reply is read with GET /v1/runs/{id}), so that deleting or forgetting a message leaves
// no copy of it in the outbox.
type RunData struct {
	RunID     string            `json:"run_id"`
	SessionID string            `json:"session_id"`
	Status    carryon.RunStatus `json:"status"`
	Agent     string            `json:"agent,omitempty"`
	Error     string            `json:"error,omitempty"`
	Steps     int               `json:"steps"`
	// EventSeq is the seq of the run's stored event that this event reports: events of one run
	// are ordered by it.
	EventSeq int64         `json:"event_seq"`
	Usage    carryon.Usage `json:"usage"`
}

// Payload is the body of every delivery, in the Standard Webhooks shape.
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      RunData   `json:"data"`
}

// RunEvent is the event of run, which has just moved to its status with its stored event seq at
// now, for store.Webhooks.EnqueueWebhookEvent; ok is false for a status without an event type.
// Its id is the same whenever the same transition is reported: evt_<run id>_<seq>.
func RunEvent(run *carryon.Run, seq int64, now time.Time) (e store.WebhookEvent, ok bool) {
	typ := EventType(run.Status)
	if typ == "" {
		return e, false
	}
	p := Payload{Type: typ, Timestamp: now.UTC(), Data: RunData{
		RunID: run.ID, SessionID: run.SessionID, Status: run.Status, Agent: run.Agent, Error: run.Error,
		Steps: run.Step, EventSeq: seq, Usage: run.Usage,
	}}
	b, err := json.Marshal(p)
	if err != nil {
		return e, false // not reached: every field marshals
	}
	return store.WebhookEvent{
		OwnerID: run.OwnerID, SessionID: run.SessionID, Type: typ, ID: fmt.Sprintf("evt_%s_%d", run.ID, seq),
		Payload: b, At: now,
	}, true
}

// ScheduleData is the data of a schedule.fired event: ids only (the schedule's message is read
// with GET /v1/schedules/{id}, the run with GET /v1/runs/{id}).
type ScheduleData struct {
	ScheduleID string    `json:"schedule_id"`
	Tick       time.Time `json:"tick"`
	RunID      string    `json:"run_id"`
	SessionID  string    `json:"session_id"`
}

// SchedulePayload is the body of a schedule.fired delivery.
type SchedulePayload struct {
	Type      string       `json:"type"`
	Timestamp time.Time    `json:"timestamp"`
	Data      ScheduleData `json:"data"`
}

// ScheduleEvent is the schedule.fired event of the tick of schedule scheduleID that started
// run at now, for store.Webhooks.EnqueueWebhookEvent in the transaction of the claim. Its id is
// the same whenever the same tick is reported: evt_<schedule id>_<tick in Unix microseconds>.
func ScheduleEvent(scheduleID string, tick time.Time, run *carryon.Run, now time.Time) store.WebhookEvent {
	p := SchedulePayload{Type: ScheduleFired, Timestamp: now.UTC(), Data: ScheduleData{
		ScheduleID: scheduleID, Tick: tick.UTC(), RunID: run.ID, SessionID: run.SessionID,
	}}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // not reached: strings and times
	}
	return store.WebhookEvent{
		OwnerID: run.OwnerID, SessionID: run.SessionID, Type: ScheduleFired, ID: fmt.Sprintf("evt_%s_%d", scheduleID, tick.UnixMicro()),
		Payload: b, At: now,
	}
}
