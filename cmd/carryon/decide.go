package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// decisionFlags are the flags of `carryon runs approve|reject|outputs`.
type decisionFlags struct {
	action, decision, arguments, result, reason string
	outputs                                     outputFlags
}

// outputFlags is a flag that may be given more than once.
type outputFlags []string

func (r *outputFlags) String() string     { return strings.Join(*r, ",") }
func (r *outputFlags) Set(v string) error { *r = append(*r, v); return nil }

func (d *decisionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.action, "action", "", "the action to decide (approve, reject); default the one the run waits on")
	fs.StringVar(&d.decision, "decision", "", "approve: approve, rerun, mark_done or skip; default approve for a tool that asks, rerun for an interrupted action")
	fs.StringVar(&d.arguments, "arguments", "", "approve: a JSON object that replaces the model's arguments")
	fs.StringVar(&d.result, "result", "", "approve --decision mark_done: what the model is told")
	fs.StringVar(&d.reason, "reason", "", "reject: told to the model with the rejection")
	fs.Var(&d.outputs, "output", "outputs: CALL_ID=TEXT, once per waiting call (TEXT alone when one call waits)")
}

// decide sends the decision cmd (approve, reject or outputs) on run id and returns the run as
// the server left it. Every call carries a request id of its own: a retry of the command is a
// new decision, which the server refuses once the run no longer waits.
func (d *decisionFlags) decide(ctx context.Context, c *client.Client, cmd, id string) (*carryon.Run, error) {
	retry := carryon.RetryOptions{RequestID: carryon.NewID("req_")}
	if cmd == "outputs" {
		outs, err := d.toolOutputs(ctx, c, id)
		if err != nil {
			return nil, err
		}
		return c.SubmitToolOutputs(ctx, id, carryon.ToolOutputs{Outputs: outs, RetryOptions: retry})
	}
	in := carryon.Approval{ActionID: d.action, Decision: carryon.Decision(d.decision), Result: d.result, Reason: d.reason, RetryOptions: retry}
	if d.arguments != "" {
		if !json.Valid([]byte(d.arguments)) {
			return nil, usagef("--arguments is not JSON: %s", clip(d.arguments, 60))
		}
		in.Arguments = json.RawMessage(d.arguments)
	}
	if in.ActionID == "" || in.Decision == "" {
		a, err := waitingAction(ctx, c, id)
		if err != nil {
			return nil, err
		}
		if in.ActionID == "" {
			in.ActionID = a.ID
		}
		if in.Decision == "" {
			in.Decision = carryon.DecisionRerun
			if a.Approval == carryon.ApprovalRequired {
				in.Decision = carryon.DecisionApprove
			}
		}
	}
	if cmd == "reject" {
		if d.decision != "" && carryon.Decision(d.decision) != carryon.DecisionReject {
			return nil, usagef("reject takes no --decision (it is reject)")
		}
		in.Decision = carryon.DecisionReject
	}
	return c.Approve(ctx, id, in)
}

// waitingAction is the action run id waits on for a decision.
func waitingAction(ctx context.Context, c *client.Client, id string) (*carryon.Action, error) {
	run, err := c.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if run.Status != carryon.RunWaitingApproval {
		return nil, fmt.Errorf("run %s is %s, not waiting for a decision", id, run.Status)
	}
	acts, err := c.Actions(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := len(acts) - 1; i >= 0; i-- {
		a := acts[i]
		if a.Status == carryon.ActionWaiting && a.Approval == carryon.ApprovalRequired || a.Status == carryon.ActionStarted || a.Status == carryon.ActionUnknown {
			return a, nil
		}
	}
	return nil, fmt.Errorf("run %s waits for a decision but its journal shows no waiting action: give --action", id)
}

// toolOutputs reads the --output flags: CALL_ID=TEXT each, or one bare TEXT for the one call a
// run waits for.
func (d *decisionFlags) toolOutputs(ctx context.Context, c *client.Client, id string) ([]carryon.ToolOutput, error) {
	if len(d.outputs) == 0 {
		return nil, usagef("outputs needs --output CALL_ID=TEXT for each waiting call")
	}
	if len(d.outputs) == 1 {
		run, err := c.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		if ra := run.RequiredAction; ra != nil && len(ra.ToolCalls) == 1 && !strings.HasPrefix(d.outputs[0], ra.ToolCalls[0].CallID+"=") {
			return []carryon.ToolOutput{{CallID: ra.ToolCalls[0].CallID, Output: d.outputs[0]}}, nil
		}
	}
	outs := make([]carryon.ToolOutput, 0, len(d.outputs))
	for _, o := range d.outputs {
		callID, text, ok := strings.Cut(o, "=")
		if !ok || callID == "" {
			return nil, usagef("--output %q: want CALL_ID=TEXT", clip(o, 40))
		}
		outs = append(outs, carryon.ToolOutput{CallID: callID, Output: text})
	}
	return outs, nil
}
