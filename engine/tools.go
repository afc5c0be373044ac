package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/model"
	"github.com/carryon-hub/carryon/tool"
)

// maxResultBytes bounds a tool result kept in the journal and sent back to the model.
const maxResultBytes = 64 << 10

// runTools runs the step's tool calls in order, each journaled as started (durably) before it runs
// and with its outcome after, and returns the tool result messages.
func (e *Engine) runTools(ctx context.Context, hub Hub, run *carryon.Run, step int, calls []model.ToolCall, emit func(carryon.EventType, any) bool) ([]carryon.NewMessage, error) {
	var msgs []carryon.NewMessage
	for i, call := range calls {
		a := &carryon.Action{
			ID: carryon.NewID("act_"), RunID: run.ID, SessionID: run.SessionID, Step: step, Index: i,
			Attempt: run.Attempt, CallID: call.ID, Tool: call.Name, Args: call.Arguments,
			Effect: carryon.EffectUnsafe, Status: carryon.ActionStarted,
			IdempotencyKey: fmt.Sprintf("%s/%d/%d", run.ID, step, i), StartedAt: time.Now().UTC().Truncate(time.Microsecond),
		}
		if t, ok := e.tools.Get(call.Name); ok {
			a.Effect = t.Effect()
		}
		if err := hub.StartAction(ctx, run, a); err != nil {
			return nil, fmt.Errorf("journal tool call %s: %w", call.Name, err)
		}
		emit(carryon.EventToolStarted, a)
		content := e.invoke(ctx, hub, run, a)
		if err := hub.FinishAction(ctx, run, a); err != nil {
			return nil, fmt.Errorf("journal tool result %s: %w", call.Name, err)
		}
		emit(carryon.EventToolFinished, a)
		if a.Tool == "update_working_memory" && a.Status == carryon.ActionSucceeded {
			emit(carryon.EventMemoryUpdated, json.RawMessage(a.Result))
		}
		msgs = append(msgs, carryon.NewMessage{Role: carryon.RoleTool, Content: content, ToolCallID: call.ID, Name: call.Name})
	}
	return msgs, nil
}

// invoke runs one journaled call and records its outcome on a; it returns what the model sees.
// A failing tool is not a failing run: the model gets the error and may correct itself.
func (e *Engine) invoke(ctx context.Context, hub Hub, run *carryon.Run, a *carryon.Action) string {
	res, err := e.tools.Invoke(ctx, a.Tool, tool.Call{
		Args: a.Args, SessionID: run.SessionID, RunID: run.ID, IdempotencyKey: a.IdempotencyKey,
		Workspace: e.Workspace(run.SessionID), Memory: memoryEditor{hub: hub, run: run},
	})
	now := time.Now().UTC().Truncate(time.Microsecond)
	a.FinishedAt = &now
	a.FingerprintBefore, a.FingerprintAfter = res.FingerprintBefore, res.FingerprintAfter
	if err != nil {
		a.Status, a.Error = carryon.ActionFailed, clipBytes(err.Error())
		return "error: " + a.Error
	}
	a.Status, a.Result = carryon.ActionSucceeded, clipBytes(res.Content)
	if a.Result == "" {
		return "(no output)"
	}
	return a.Result
}

// memoryEditor lets the update_working_memory tool write through the hub for the run.
type memoryEditor struct {
	hub Hub
	run *carryon.Run
}

func (m memoryEditor) PatchWorkingMemory(ctx context.Context, patch json.RawMessage) (carryon.WorkingMemory, error) {
	st, err := m.hub.PatchWorkingMemory(ctx, m.run, patch)
	if err != nil {
		return nil, err
	}
	return st.WorkingMemory, nil
}

func clipBytes(s string) string {
	if len(s) <= maxResultBytes {
		return s
	}
	return s[:maxResultBytes] + "\n…(truncated)"
}
