package carryon

import (
	"encoding/json"
	"time"
)

// EventType names what happened in a run.
type EventType string

// Run event types, in the order a run produces them.
const (
	EventRunQueued            EventType = "run.queued"
	EventRunStarted           EventType = "run.started"
	EventModelDelta           EventType = "model.delta"
	EventToolStarted          EventType = "tool.started"
	EventToolFinished         EventType = "tool.finished"
	EventWorkingMemoryUpdated EventType = "memory.updated"
	EventMessageAppended      EventType = "message.appended"
	EventRunWaiting           EventType = "run.waiting_approval"
	EventRunRequiresAction    EventType = "run.requires_action"
	EventRunApproved          EventType = "run.approved"
	EventToolOutputs          EventType = "run.tool_outputs"
	EventRunFinished          EventType = "run.finished"
	EventRunFailed            EventType = "run.failed"
)

// Event is one stored event of a run. Seq orders a run's events from 1 with no gaps, so a stream
// can resume after any event (SSE Last-Event-ID).
type Event struct {
	RunID     string          `json:"run_id"`
	Seq       int64           `json:"seq"`
	Type      EventType       `json:"type"`
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// EventStream yields a run's events in order. Next blocks until an event, the end of the stream
// (false, nil) or an error; Close releases it.
type EventStream interface {
	Next() (*Event, bool, error)
	Close() error
}
