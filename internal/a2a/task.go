package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// replyArtifact is the id of the artifact that holds a task's reply.
const replyArtifact = "reply"

// translator reads a run's events in order and keeps the task they make: its state, the reply
// so far, what an input-required task waits for. Fed an event, it returns the stream events it
// makes, so that the stored events alone decide both a task and its stream.
type translator struct {
	d         dialect
	run       *carryon.Run
	state     string
	reply     strings.Builder
	chunks    int // the reply chunks of the current attempt sent so far
	final     string
	errMsg    string
	action    *carryon.Action
	budget    *carryon.BudgetStop // why the run waits, when it stopped at a budget
	required  *carryon.RequiredAction
	updated   time.Time
	lastSeq   int64
	settled   bool // the run ended or waits for input
	streamEnd bool
}

// newTranslator starts the task of run, submitted.
func newTranslator(d dialect, run *carryon.Run) *translator {
	return &translator{d: d, run: run, state: stateSubmitted, updated: run.CreatedAt}
}

// finishedData is the data of run.finished, run.failed, run.waiting_approval and
// run.requires_action.
type finishedData struct {
	Status         carryon.RunStatus       `json:"status"`
	Reply          string                  `json:"reply"`
	Error          string                  `json:"error"`
	Action         *carryon.Action         `json:"action"`
	RequiredAction *carryon.RequiredAction `json:"required_action"`
	Budget         *carryon.BudgetStop     `json:"budget"`
}

// feed takes the next event and returns the stream events it makes.
func (t *translator) feed(e *carryon.Event) []any {
	if e.Seq > t.lastSeq {
		t.lastSeq = e.Seq
	}
	t.updated = e.CreatedAt
	switch e.Type {
	case carryon.EventRunStarted, carryon.EventRunApproved, carryon.EventToolOutputs:
		t.settled, t.action, t.required = false, nil, nil
		if e.Type == carryon.EventRunStarted {
			// A new attempt (a takeover after a crash) runs its step again: its reply restarts.
			t.reply.Reset()
			t.chunks = 0
		}
		if t.state == stateWorking {
			return nil
		}
		t.state = stateWorking
		return []any{t.statusEvent()}
	case carryon.EventModelDelta:
		var d struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(e.Data, &d) != nil || d.Text == "" {
			return nil
		}
		t.reply.WriteString(d.Text)
		t.chunks++
		return []any{artifactUpdate{TaskID: t.run.ID, ContextID: t.run.SessionID, Append: t.chunks > 1,
			Artifact: artifact{ArtifactID: replyArtifact, Name: replyArtifact, Parts: []part{t.d.textPart(d.Text)}}}}
	case carryon.EventRunWaiting, carryon.EventRunRequiresAction, carryon.EventRunFinished, carryon.EventRunFailed:
		var d finishedData
		_ = json.Unmarshal(e.Data, &d)
		t.settled = true
		var out []any
		switch {
		case e.Type == carryon.EventRunWaiting && d.Budget != nil:
			t.state, t.budget, t.action = stateInputRequired, d.Budget, nil
		case e.Type == carryon.EventRunWaiting:
			t.state, t.budget, t.action = stateInputRequired, nil, d.Action
			if t.action == nil {
				t.action = &carryon.Action{}
			}
		case e.Type == carryon.EventRunRequiresAction:
			t.state, t.required = stateInputRequired, d.RequiredAction
			if t.required == nil {
				t.required = &carryon.RequiredAction{}
			}
		case e.Type == carryon.EventRunFailed || d.Status == carryon.RunFailed:
			t.state, t.errMsg = stateFailed, d.Error
		case d.Status == carryon.RunCancelled || d.Status == carryon.RunInterrupted:
			t.state, t.errMsg = stateCanceled, d.Error
		default:
			t.state, t.final = stateCompleted, d.Reply
			out = append(out, artifactUpdate{TaskID: t.run.ID, ContextID: t.run.SessionID, LastChunk: true,
				Artifact: artifact{ArtifactID: replyArtifact, Name: replyArtifact, Parts: []part{t.d.textPart(d.Reply)}}})
		}
		t.streamEnd = true
		return append(out, t.statusEvent())
	}
	return nil
}

// statusEvent is the status-update event of the task as it is.
func (t *translator) statusEvent() statusUpdate {
	u := statusUpdate{TaskID: t.run.ID, ContextID: t.run.SessionID, Status: t.status()}
	if t.d.legacy {
		final := t.settled
		u.Final = &final
	}
	return u
}

// status is the task's status: its state, and the agent's message for an input-required, failed
// or completed task.
func (t *translator) status() taskStatus {
	s := taskStatus{State: t.d.state(t.state), Timestamp: t.updated.UTC().Format(time.RFC3339Nano)}
	id := func(suffix string) string { return fmt.Sprintf("%s-%d-%s", t.run.ID, t.lastSeq, suffix) }
	switch {
	case t.state == stateInputRequired && t.budget != nil:
		b := t.budget
		text := fmt.Sprintf("The run stopped at a budget: %s. To go on, %s; or answer approve on this task once the budget is raised (reject ends the run).", b.Error(), b.GoOn(t.run.ID))
		s.Message = t.d.agentMessage(id("budget"), t.run.ID, t.run.SessionID, t.d.textPart(text),
			t.d.dataPart(map[string]any{"budget_stop": b}))
	case t.state == stateInputRequired && t.action != nil:
		a := t.action
		text := fmt.Sprintf("The agent wants to call %s with %s, which needs your approval. Answer on this task with a message whose text is approve or reject, or with a data part {\"decision\": \"approve\" | \"reject\", \"reason\": \"…\"}.", a.Tool, compact(a.Args))
		s.Message = t.d.agentMessage(id("approval"), t.run.ID, t.run.SessionID, t.d.textPart(text),
			t.d.dataPart(map[string]any{"approval": map[string]any{"action_id": a.ID, "tool": a.Tool, "arguments": json.RawMessage(compact(a.Args))}}))
	case t.state == stateInputRequired && t.required != nil:
		var names []string
		for _, c := range t.required.ToolCalls {
			names = append(names, c.Name)
		}
		text := fmt.Sprintf("The agent called your tools %s. Answer on this task with a data part {\"outputs\": [{\"call_id\": …, \"output\": …}]}, one output per call (the text of the message is the output when there is one call).", strings.Join(names, ", "))
		s.Message = t.d.agentMessage(id("tools"), t.run.ID, t.run.SessionID, t.d.textPart(text),
			t.d.dataPart(map[string]any{"tool_calls": t.required.ToolCalls}))
	case t.state == stateFailed || t.state == stateCanceled:
		if t.errMsg != "" {
			s.Message = t.d.agentMessage(id("error"), t.run.ID, t.run.SessionID, t.d.textPart(t.errMsg))
		}
	case t.state == stateCompleted:
		s.Message = t.d.agentMessage(t.run.ID+"-reply", t.run.ID, t.run.SessionID, t.d.textPart(t.final))
	}
	return s
}

// task is the task as it is.
func (t *translator) task() task {
	out := task{ID: t.run.ID, ContextID: t.run.SessionID, Status: t.status(),
		Metadata: map[string]any{"carryon": map[string]any{"run_id": t.run.ID, "session_id": t.run.SessionID, "agent": t.run.Agent}}}
	reply := t.reply.String()
	if t.state == stateCompleted {
		reply = t.final
	}
	if reply != "" {
		out.Artifacts = []artifact{{ArtifactID: replyArtifact, Name: replyArtifact, Parts: []part{t.d.textPart(reply)}}}
	}
	return out
}

// compact is a JSON value on one line, "{}" when empty.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
