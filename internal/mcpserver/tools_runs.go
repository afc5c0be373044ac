package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/carryon-hub/carryon"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startRunArgs are the arguments of start_run; their JSON names are the contract.
type startRunArgs struct {
	SessionID string `json:"session_id" jsonschema:"the session's id (sess_...)"`
	Message   string `json:"message" jsonschema:"the user's message that starts the run"`
	RequestID string `json:"request_id,omitempty" jsonschema:"an idempotency key: a repeat with the same one returns the same run and waits for it again"`
	// ExpectedVersion is optional; a server that requires versions needs it.
	ExpectedVersion *int64 `json:"expected_version,omitempty" jsonschema:"refuse to start unless the session is at this version"`
}

// runResult is the answer of start_run: the run as it stands when the wait ended. Done is false
// when the run was still going; calling start_run again with the same session_id, message and
// request_id waits for the same run again (GET /v1/runs/{run_id} polls it too).
type runResult struct {
	RunID     string            `json:"run_id"`
	SessionID string            `json:"session_id"`
	RequestID string            `json:"request_id"`
	Status    carryon.RunStatus `json:"status"`
	Done      bool              `json:"done"`
	Reply     string            `json:"reply,omitempty"`
	Error     string            `json:"error,omitempty"`
	Next      string            `json:"next,omitempty"`
	Replayed  bool              `json:"replayed"`
	// BudgetStop is why a run stopped at a budget (docs/API.md, "Budgets").
	BudgetStop *carryon.BudgetStop `json:"budget_stop,omitempty"`
}

func (s *server) addRunTools(srv *mcp.Server) {
	destructive := hints("Start a run", false, false, true)
	destructive.OpenWorldHint = carryon.Ptr(true)
	addTool(s, srv, &mcp.Tool{
		Name: "start_run",
		Description: "Send a message to a session and let carryon's agent work on it: it appends the message, runs the agent " +
			"(which may call a model and its tools, and update the working memory) and waits a bounded time. Returns the reply when " +
			"the run ended, or the run id (run_...) and a request_id to call start_run with again to keep waiting.",
		// The agent's tools can change the session's workspace files, and it calls a model.
		Annotations: destructive,
	}, nil, s.startRun)
}

func (s *server) startRun(ctx context.Context, in startRunArgs) (any, error) {
	if s.runs == nil {
		return nil, notImplemented("agent runs")
	}
	if err := s.versioned(in.ExpectedVersion); err != nil {
		return nil, err
	}
	if in.RequestID == "" {
		in.RequestID = "mcp-" + rand.Text()
	}
	rctx, rc := withReceipt(ctx)
	run, err := s.runs.Start(rctx, in.SessionID, carryon.NewRun{Message: in.Message, WriteOptions: carryon.WriteOptions{ExpectedVersion: in.ExpectedVersion, RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	if !run.Status.Terminal() {
		if err := s.waitRun(ctx, run.ID); err != nil {
			return nil, err
		}
		if run, err = s.runs.GetRun(ctx, run.ID); err != nil {
			return nil, err
		}
	}
	res := runResult{RunID: run.ID, SessionID: run.SessionID, RequestID: in.RequestID, Status: run.Status,
		Done: run.Status.Terminal(), Reply: run.Reply, Error: run.Error, Replayed: rc.Replayed}
	switch {
	case run.BudgetStop != nil:
		res.BudgetStop = run.BudgetStop
		res.Next = "the run stopped at a budget: " + run.BudgetStop.GoOn(run.ID)
		if run.Status == carryon.RunWaitingApproval {
			res.Next += "; call start_run again with the same request_id to wait for it after that"
		}
	case run.Status == carryon.RunWaitingApproval:
		res.Next = "the run waits for a person to approve an action (carryon runs show " + run.ID + "); call start_run again with the same request_id to wait for it after that"
	case !res.Done:
		res.Next = "the run is still going: call start_run again with the same session_id, message and request_id to keep waiting"
	}
	return res, nil
}

// waitRun follows the run's events until it ends or waits for an approval, for at most the
// server's run wait. Running out of time is no error: the caller reports the run as it stands.
func (s *server) waitRun(ctx context.Context, runID string) error {
	wctx, cancel := context.WithTimeout(ctx, s.runWait)
	defer cancel()
	st, err := s.runs.Events(wctx, runID, 0, true)
	if err != nil {
		return timedOut(wctx, ctx, err)
	}
	defer st.Close()
	for {
		ev, ok, err := st.Next()
		if err != nil {
			return timedOut(wctx, ctx, err)
		}
		if !ok {
			return nil
		}
		switch ev.Type {
		case carryon.EventRunFinished, carryon.EventRunFailed, carryon.EventRunWaiting:
			return nil
		}
	}
}

// timedOut drops err when it is only the wait running out (wctx done, the caller's ctx not).
func timedOut(wctx, ctx context.Context, err error) error {
	if wctx.Err() != nil && ctx.Err() == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return nil
	}
	return err
}
