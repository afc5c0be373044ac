package runs

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
)

// Client-side tools: a run may declare function tools the client runs itself (NewRun.Tools). When
// the model calls them, the engine journals the calls waiting and the run stops in
// requires_action; SubmitToolOutputs records the client's outputs as the calls' results and
// queues the run to go on. A run left waiting longer than Config.ToolOutputTimeout fails.

// toolName is the shape of a tool name every model provider accepts.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkClientTools refuses client tools a model could not be offered: a bad or duplicate name, a
// schema that is not an object schema, too many or too large. (clashes refuses the names of the
// profile's own tools once the run's profile is known.)
func checkClientTools(tools []carryon.ClientTool) error {
	if len(tools) > carryon.MaxClientTools {
		return carryon.Errorf(carryon.EINVALID, "tools: at most %d client tools, not %d", carryon.MaxClientTools, len(tools))
	}
	seen := map[string]bool{}
	for i, t := range tools {
		at := fmt.Sprintf("tools[%d]", i)
		switch {
		case !toolName.MatchString(t.Name):
			return carryon.Errorf(carryon.EINVALID, "%s: name must match ^[a-zA-Z0-9_-]{1,64}$, not %q", at, t.Name)
		case seen[t.Name]:
			return carryon.Errorf(carryon.EINVALID, "%s: the name %q is declared twice", at, t.Name)
		case len(t.Name)+len(t.Description)+len(t.Parameters) > carryon.MaxClientToolBytes:
			return carryon.Errorf(carryon.EINVALID, "%s: the definition is larger than %d bytes", at, carryon.MaxClientToolBytes)
		}
		if err := carryon.CheckText(at+".description", t.Description); err != nil {
			return err
		}
		if len(t.Parameters) > 0 {
			if err := carryon.CheckJSONText(at+".parameters", t.Parameters); err != nil {
				return err
			}
			if err := tool.CheckSchema(t.Parameters); err != nil {
				return carryon.Errorf(carryon.EINVALID, "%s: parameters must be a JSON Schema of an object: %v", at, err)
			}
		}
		seen[t.Name] = true
	}
	return nil
}

// clashes refuses client tools named as one of the profile's own tools (the engine would offer
// the model two tools of one name). Tools an MCP server offers are found only when the run starts;
// a client tool named as one of those is not offered, and the server's tool runs.
func clashes(agent *carryon.Agent, tools []carryon.ClientTool) error {
	for i, t := range tools {
		for _, own := range agent.Tools {
			if own.Name == t.Name {
				return carryon.Errorf(carryon.EINVALID, "tools[%d]: %q is the name of a tool of agent %s; choose another", i, t.Name, agent.Name)
			}
		}
	}
	return nil
}

// requiredAction is what a requires_action run waits for: its client tool calls that wait.
func requiredAction(ctx context.Context, tx store.Tx, run *carryon.Run) (*carryon.RequiredAction, error) {
	acts, err := tx.StepActions(ctx, run.OwnerID, run.ID, run.Step+1)
	if err != nil {
		return nil, err
	}
	ra := &carryon.RequiredAction{ToolCalls: []carryon.RequiredToolCall{}}
	for _, a := range waitingOutputs(acts) {
		ra.ToolCalls = append(ra.ToolCalls, carryon.RequiredToolCall{CallID: a.CallID, Name: a.Tool, Arguments: a.Args})
	}
	return ra, nil
}

// waitingOutputs are the client tool calls among acts that wait for an output.
func waitingOutputs(acts []*carryon.Action) []*carryon.Action {
	var out []*carryon.Action
	for _, a := range acts {
		if a.Executor == carryon.ExecutorClient && a.Status == carryon.ActionWaiting {
			out = append(out, a)
		}
	}
	return out
}

// withRequiredAction fills what a waiting run waits for: run.RequiredAction when it waits for tool
// outputs, run.PendingAction when it waits for a decision.
func withRequiredAction(ctx context.Context, tx store.Tx, run *carryon.Run) error {
	switch run.Status {
	case carryon.RunRequiresAction:
		ra, err := requiredAction(ctx, tx, run)
		run.RequiredAction = ra
		return err
	case carryon.RunWaitingApproval:
		a, err := pendingAction(ctx, tx, run)
		run.PendingAction = a
		return err
	}
	return nil
}

// pendingAction is the action of a waiting_approval run's current step that waits for a decision:
// one waiting for approval before its call, or one a crash left started or unknown.
func pendingAction(ctx context.Context, tx store.Tx, run *carryon.Run) (*carryon.Action, error) {
	acts, err := tx.StepActions(ctx, run.OwnerID, run.ID, run.Step+1)
	if err != nil {
		return nil, err
	}
	for _, a := range acts {
		if a.Status == carryon.ActionWaiting && a.Approval == carryon.ApprovalRequired || a.Status == carryon.ActionStarted || a.Status == carryon.ActionUnknown {
			return a, nil
		}
	}
	return nil, nil
}

// SubmitToolOutputs answers the pending client tool calls of a requires_action run, every one of
// them, and queues the run to continue: each output becomes its call's result (the journal's
// action, succeeded) and the model gets it as the tool's message. With a request id, a repeat
// answers the run as the first submission left it; two clients answering at once: one wins, the
// other gets ECONFLICT (the run no longer waits). Outputs for a run whose session is closed or
// expired are refused (ECLOSED, EEXPIRED) before anything changes, and the run ends with that
// reason.
func (s *Service) SubmitToolOutputs(ctx context.Context, runID string, in carryon.ToolOutputs) (*carryon.Run, error) {
	if len(in.Outputs) == 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "outputs must hold one output per pending tool call")
	}
	given := map[string]string{}
	for i, o := range in.Outputs {
		switch {
		case o.CallID == "":
			return nil, carryon.Errorf(carryon.EINVALID, "outputs[%d]: call_id is required", i)
		case len(o.Output) > carryon.MaxToolOutputBytes:
			return nil, carryon.Errorf(carryon.EINVALID, "outputs[%d]: the output is larger than %d bytes", i, carryon.MaxToolOutputBytes)
		}
		if _, dup := given[o.CallID]; dup {
			return nil, carryon.Errorf(carryon.EINVALID, "outputs: call_id %q is answered twice", o.CallID)
		}
		if err := carryon.CheckText(fmt.Sprintf("outputs[%d].output", i), o.Output); err != nil {
			return nil, err
		}
		given[o.CallID] = o.Output
	}
	key := in.RequestID
	in.RequestID = ""
	run, err := sessions.Write(ctx, s.sess, "run.tool_outputs", runID, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.Run, error) {
		r, err := tx.GetRun(ctx, own, runID)
		if err != nil {
			return nil, err
		}
		if err := sessionTakesWrites(ctx, tx, r, now); err != nil {
			return nil, err
		}
		if r.Status != carryon.RunRequiresAction {
			return nil, carryon.Errorf(carryon.ECONFLICT, "run %s is %s, not waiting for tool outputs", r.ID, r.Status)
		}
		acts, err := tx.StepActions(ctx, own, r.ID, r.Step+1)
		if err != nil {
			return nil, err
		}
		waiting := waitingOutputs(acts)
		var missing, unknown []string
		for _, a := range waiting {
			if _, ok := given[a.CallID]; !ok {
				missing = append(missing, a.CallID)
			}
		}
		for id := range given {
			if !slices.ContainsFunc(waiting, func(a *carryon.Action) bool { return a.CallID == id }) {
				unknown = append(unknown, id)
			}
		}
		sort.Strings(unknown)
		switch {
		case len(unknown) > 0:
			return nil, carryon.Errorf(carryon.EINVALID, "run %s waits for no tool call %s (it waits for %s)", r.ID, strings.Join(unknown, ", "), callIDs(waiting))
		case len(missing) > 0:
			return nil, carryon.Errorf(carryon.EINVALID, "every pending tool call needs an output: %s missing", strings.Join(missing, ", "))
		}
		for _, a := range waiting {
			a.Status, a.Result, a.Error, a.FinishedAt = carryon.ActionSucceeded, given[a.CallID], "", &now
			if err := tx.UpdateAction(ctx, own, a); err != nil {
				return nil, err
			}
		}
		r.Status, r.Error, r.UpdatedAt, r.FinishedAt = carryon.RunQueued, "", now, nil
		if err := tx.UpdateRun(ctx, r, r.Attempt); err != nil {
			return nil, err
		}
		ids := []string{}
		for _, a := range waiting {
			ids = append(ids, a.CallID)
		}
		return r, appendEvent(ctx, tx, own, r.ID, carryon.EventToolOutputs, map[string]any{"call_ids": ids}, now)
	})
	if err != nil {
		s.endForSession(ctx, runID, err)
		return nil, err
	}
	s.notify.local(runID)
	s.Wake()
	return run, nil
}

// callIDs lists the calls' ids for an error message.
func callIDs(acts []*carryon.Action) string {
	var ids []string
	for _, a := range acts {
		ids = append(ids, a.CallID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// expireWaiting fails the runs that waited for tool outputs longer than Config.ToolOutputTimeout.
// It looks in a read transaction first and writes only when there are some.
func (s *Service) expireWaiting(ctx context.Context) error {
	stale := false
	if err := s.st.Read(ctx, func(tx store.Tx) error {
		runs, err := tx.StaleRequiresAction(ctx, s.now().Add(-s.cfg.ToolOutputTimeout), 1)
		stale = len(runs) > 0
		return err
	}); err != nil || !stale {
		return err
	}
	var failed []*carryon.Run
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		failed = failed[:0]
		now := s.now()
		stale, err := tx.StaleRequiresAction(ctx, now.Add(-s.cfg.ToolOutputTimeout), 100)
		if err != nil {
			return err
		}
		for _, r := range stale {
			msg := fmt.Sprintf("no tool outputs came within %s of the run's request for them", s.cfg.ToolOutputTimeout)
			if err := finishTx(ctx, tx, r, r.Attempt, carryon.RunFailed, "", msg, now); err != nil {
				return err
			}
			failed = append(failed, r)
		}
		return nil
	})
	for _, r := range failed {
		s.notify.local(r.ID)
		if err == nil {
			s.cfg.Telemetry.RunEnded(r.Agent, carryon.RunFailed)
		}
	}
	return err
}
