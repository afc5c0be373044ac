package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// runEnd is how a run ended, from its last event.
type runEnd struct {
	Status carryon.RunStatus `json:"status"`
	Reply  string            `json:"reply"`
	Error  string            `json:"error"`
	// RequiredAction lists the client tool calls a requires_action run waits for.
	RequiredAction *carryon.RequiredAction `json:"required_action"`
	// Action is the action a waiting_approval run stopped on, with the arguments it proposes.
	Action *carryon.Action `json:"action"`
	// Cancelled is true when the user stopped the run with Ctrl-C.
	Cancelled bool `json:"-"`
	// Seq is the seq of the run's last event, where following it again resumes.
	Seq int64 `json:"-"`
}

// followRun prints a run's events as they arrive until its last event. When ctx ends first (the
// user pressed Ctrl-C) the run is cancelled on the server, and the rest of its events, up to
// the cancellation, are still printed: the program stops cleanly instead of leaving the run going.
// st may be nil when ctx ended before the stream could be opened; it starts after the event
// after (0 for a run's first).
func followRun(ctx context.Context, c *client.Client, runID string, after int64, st carryon.EventStream, w io.Writer) (*runEnd, error) {
	p := &printer{w: w, last: after}
	cancelled := false
	for {
		var e *carryon.Event
		var ok bool
		var err error
		if st == nil {
			err = ctx.Err()
		} else {
			e, ok, err = st.Next()
		}
		if err != nil && ctx.Err() != nil && !cancelled {
			if st != nil {
				st.Close()
			}
			cancelled = true
			p.endLine()
			fmt.Fprintf(w, "^C cancelling %s…\n", runID)
			bg, stop := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer stop()
			if _, err := c.Cancel(bg, runID, carryon.RetryOptions{}); err != nil {
				return nil, fmt.Errorf("cancel %s: %w", runID, err)
			}
			if st, err = c.Events(bg, runID, p.last, true); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			st.Close()
			return nil, err
		}
		if !ok {
			st.Close()
			return nil, fmt.Errorf("the event stream of %s ended before the run did", runID)
		}
		if end := p.event(e); end != nil {
			st.Close()
			end.Cancelled, end.Seq = cancelled, p.last
			return end, nil
		}
	}
}

// printer shows a run's events to people: the model's text as it streams, a line per tool call
// and per working memory change, then the reply.
type printer struct {
	w        io.Writer
	last     int64
	midLine  bool
	streamed strings.Builder // the model's text since the last tool call
}

func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

// event prints one event and returns the run's end at its last event.
func (p *printer) event(e *carryon.Event) *runEnd {
	if e.Seq > 0 { // a delta's preview (seq 0) does not move the cursor a reopened stream resumes at
		p.last = e.Seq
	}
	switch e.Type {
	case carryon.EventModelDelta:
		var d struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Text != "" {
			fmt.Fprint(p.w, d.Text)
			p.streamed.WriteString(d.Text)
			p.midLine = !strings.HasSuffix(d.Text, "\n")
		}
	case carryon.EventToolStarted:
		var a carryon.Action
		if json.Unmarshal(e.Data, &a) == nil {
			p.endLine()
			p.streamed.Reset()
			fmt.Fprintf(p.w, "→ tool %s(%s)\n", a.Tool, formatArgs(a.Args))
		}
	case carryon.EventToolFinished:
		var a carryon.Action
		if json.Unmarshal(e.Data, &a) == nil {
			p.endLine()
			line := fmt.Sprintf("← %s: %s", a.Tool, a.Status)
			if a.Error != "" {
				line += " (" + clip(a.Error, 120) + ")"
			}
			fmt.Fprintln(p.w, line)
		}
	case carryon.EventWorkingMemoryUpdated:
		var m carryon.WorkingMemory
		if json.Unmarshal(e.Data, &m) == nil {
			p.endLine()
			fmt.Fprintf(p.w, "memory: goal=%q next=%q\n", m.Goal(), m.NextAction())
		}
	case carryon.EventRunStarted:
		var d struct {
			Attempt int `json:"attempt"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Attempt > 1 {
			p.endLine()
			fmt.Fprintf(p.w, "(resumed: attempt %d)\n", d.Attempt)
		}
	case carryon.EventRunFinished, carryon.EventRunFailed, carryon.EventRunWaiting, carryon.EventRunRequiresAction:
		var end runEnd
		_ = json.Unmarshal(e.Data, &end)
		if end.Status == "" {
			end.Status = carryon.RunFailed
		}
		if r := strings.TrimSpace(end.Reply); r != "" && r != strings.TrimSpace(p.streamed.String()) {
			p.endLine()
			fmt.Fprintln(p.w, r)
		}
		p.endLine()
		if end.Status == carryon.RunRequiresAction && end.RequiredAction != nil {
			for _, c := range end.RequiredAction.ToolCalls {
				fmt.Fprintf(p.w, "client tool %s(%s) waits for its output [%s]\n", c.Name, formatArgs(c.Arguments), c.CallID)
			}
		} else if end.Status == carryon.RunWaitingApproval && end.Action != nil {
			fmt.Fprintf(p.w, "%s(%s) waits for a decision [%s]\n", end.Action.Tool, formatArgs(end.Action.Args), end.Action.ID)
		} else if end.Status != carryon.RunSucceeded {
			msg := end.Error
			if msg == "" {
				msg = "no reason given"
			}
			fmt.Fprintf(p.w, "run %s: %s\n", strings.ReplaceAll(string(end.Status), "_", " "), msg)
		}
		return &end
	}
	return nil
}

// formatArgs shows a tool call's arguments on one line, in their order: name=value pairs, long
// values clipped.
func formatArgs(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return clip(string(raw), 80)
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		var v json.RawMessage
		if err == nil {
			err = dec.Decode(&v)
		}
		if err != nil {
			return clip(string(raw), 80)
		}
		parts = append(parts, fmt.Sprintf("%v=%s", k, clip(string(v), 48)))
	}
	return strings.Join(parts, ", ")
}

// clip shortens s to n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runFailure is the error of a run that did not succeed, for the exit status.
func runFailure(runID string, end *runEnd) error {
	switch end.Status {
	case carryon.RunSucceeded:
		return nil
	case carryon.RunWaitingApproval, carryon.RunRequiresAction:
		return fmt.Errorf("run %s waits; answer with: %s", runID, answerCommand(runID, end))
	}
	if end.Error == "" {
		return fmt.Errorf("run %s %s", runID, end.Status)
	}
	return fmt.Errorf("run %s %s: %s", runID, end.Status, end.Error)
}

// answerCommand is the command that answers what a waiting run waits for.
func answerCommand(runID string, end *runEnd) string {
	if end.Status == carryon.RunWaitingApproval {
		return fmt.Sprintf("carryon runs approve %s, or carryon runs reject %s --reason TEXT", runID, runID)
	}
	var calls []string
	if end.RequiredAction != nil {
		for _, c := range end.RequiredAction.ToolCalls {
			calls = append(calls, "--output "+c.CallID+"=TEXT")
		}
	}
	return strings.TrimSpace("carryon runs outputs " + runID + " " + strings.Join(calls, " "))
}
