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
	// scheduleArgs are the arguments of pause_schedule, resume_schedule, delete_schedule and
	// run_schedule.
	scheduleArgs struct {
		ScheduleID string `json:"schedule_id" jsonschema:"the schedule's id (sch_...)"`
		RequestID  string `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first and does nothing again"`
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

// scheduleDeleted is the result of delete_schedule.
type scheduleDeleted struct {
	ID       string `json:"id"`
	Deleted  bool   `json:"deleted"`
	Replayed bool   `json:"replayed"`
}

// scheduleRun is the result of run_schedule: the run it started, as it stood then.
type scheduleRun struct {
	RunID      string            `json:"run_id"`
	SessionID  string            `json:"session_id"`
	ScheduleID string            `json:"schedule_id"`
	Status     carryon.RunStatus `json:"status"`
	Message    string            `json:"message"`
	Agent      string            `json:"agent,omitempty"`
	Replayed   bool              `json:"replayed"`
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
	addTool(s, srv, &mcp.Tool{
		Name:        "pause_schedule",
		Description: "Pause a schedule: it fires no tick until resumed. A run it started goes on.",
		Annotations: hints("Pause schedule", false, true, false),
	}, nil, s.pauseSchedule(true))
	addTool(s, srv, &mcp.Tool{
		Name:        "resume_schedule",
		Description: "Resume a paused schedule: it fires again from its next tick after now (the ticks it missed while paused are not made up).",
		Annotations: hints("Resume schedule", false, true, false),
	}, nil, s.pauseSchedule(false))
	addTool(s, srv, &mcp.Tool{
		Name:        "delete_schedule",
		Description: "Delete a schedule. A run it started goes on. A repeat without request_id is not_found.",
		Annotations: hints("Delete schedule", false, false, true),
	}, nil, s.deleteSchedule)
	addTool(s, srv, &mcp.Tool{
		Name: "run_schedule",
		Description: "Start the schedule's run now, with its message and agent, under its overlap policy (skip: session_busy while " +
			"the session has a run going; enqueue: queued after it). The schedule's ticks are unchanged. Returns the run's id and status as it started; read it with GET /v1/runs/{run_id}.",
		Annotations: hints("Run schedule now", false, false, false),
	}, nil, s.runSchedule)
}

func (s *server) pauseSchedule(paused bool) func(context.Context, scheduleArgs) (any, error) {
	return func(ctx context.Context, in scheduleArgs) (any, error) {
		ctx, rc := withReceipt(ctx)
		sc, err := s.schedules.Update(ctx, in.ScheduleID, carryon.ScheduleUpdate{Paused: &paused,
			RetryOptions: carryon.RetryOptions{RequestID: in.RequestID}})
		if err != nil {
			return nil, err
		}
		return scheduled{Schedule: sc, Replayed: rc.Replayed}, nil
	}
}

func (s *server) deleteSchedule(ctx context.Context, in scheduleArgs) (any, error) {
	ctx, rc := withReceipt(ctx)
	if err := s.schedules.Delete(ctx, in.ScheduleID, carryon.RetryOptions{RequestID: in.RequestID}); err != nil {
		return nil, err
	}
	return scheduleDeleted{ID: in.ScheduleID, Deleted: true, Replayed: rc.Replayed}, nil
}

func (s *server) runSchedule(ctx context.Context, in scheduleArgs) (any, error) {
	ctx, rc := withReceipt(ctx)
	run, err := s.schedules.RunNow(ctx, in.ScheduleID, carryon.RetryOptions{RequestID: in.RequestID})
	if err != nil {
		return nil, err
	}
	return scheduleRun{RunID: run.ID, SessionID: run.SessionID, ScheduleID: in.ScheduleID, Status: run.Status,
		Message: run.Message, Agent: run.Agent, Replayed: rc.Replayed}, nil
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
