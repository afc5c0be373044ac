package mcpserver

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The arguments of the schedule tools; their JSON names are the contract.
type (
	createScheduleArgs struct {
		SessionID string     `json:"session_id" jsonschema:"the session the runs start on"`
		Cron      string     `json:"cron,omitempty" jsonschema:"5 fields: minute hour day-of-month month day-of-week, such as 0 8 * * 1-5"`
		Every     string     `json:"every,omitempty" jsonschema:"an interval such as 15m or 2h"`
		At        *time.Time `json:"at,omitempty" jsonschema:"one run at this RFC 3339 time"`
		Timezone  string     `json:"timezone,omitempty" jsonschema:"the IANA time zone the cron is read in (default UTC)"`
		Message   string     `json:"message" jsonschema:"the message each run starts with"`
		Overlap   string     `json:"overlap,omitempty" jsonschema:"skip (default) or enqueue: a tick while the previous run is going"`
		CatchUp   string     `json:"catch_up,omitempty" jsonschema:"none (default) or latest: ticks missed while no scheduler ran"`
		RequestID string     `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first and creates nothing again"`
	}
	listSchedulesArgs struct {
		SessionID string `json:"session_id,omitempty" jsonschema:"only this session's schedules (default: all of yours)"`
		Limit     int    `json:"limit,omitempty" jsonschema:"page size (default 50)"`
		Cursor    string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	}
)

// scheduled is the result of create_schedule.
type scheduled struct {
	*carryon.Schedule
	Replayed bool `json:"replayed"`
}

// addScheduleTools registers the schedule tools, when the server has schedules.
func (s *server) addScheduleTools(srv *mcp.Server) {
	if s.schedules == nil {
		return
	}
	addTool(s, srv, &mcp.Tool{
		Name:        "create_schedule",
		Description: "Make a session start runs by itself: at the ticks of a cron expression in a time zone, every interval, or once at a time. Exactly one of cron, every and at.",
		Annotations: hints("Create schedule", false, false, false),
	}, nil, s.createSchedule)
	addTool(s, srv, &mcp.Tool{
		Name:        "list_schedules",
		Description: "List your schedules (of one session, or all), newest first, with their next fire times and last ticks.",
		Annotations: hints("List schedules", true, true, false),
	}, func(sc *jsonschema.Schema) { bound(sc, "limit", 1, carryon.MaxMessageWindow) }, s.listSchedules)
}

func (s *server) createSchedule(ctx context.Context, in createScheduleArgs) (any, error) {
	ctx, rc := withReceipt(ctx)
	sc, err := s.schedules.Create(ctx, in.SessionID, carryon.NewSchedule{Cron: in.Cron, Every: in.Every, At: in.At,
		Timezone: in.Timezone, Message: in.Message, Overlap: in.Overlap, CatchUp: in.CatchUp,
		RetryOptions: carryon.RetryOptions{RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return scheduled{Schedule: sc, Replayed: rc.Replayed}, nil
}

func (s *server) listSchedules(ctx context.Context, in listSchedulesArgs) (any, error) {
	page, err := s.schedules.List(ctx, in.SessionID, carryon.ScheduleFilter{Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	page.Items = nonNil(page.Items)
	return page, nil
}
