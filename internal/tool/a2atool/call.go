package a2atool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// contextPrefix starts the fingerprint that keeps a remote contextId in the journal.
const contextPrefix = "a2a-context:"

// sendTool is an agent's one tool: it sends the model's message and returns the reply.
type sendTool struct {
	agent *Agent
	desc  string
}

func (t *sendTool) Name() string                { return t.agent.ToolName() }
func (t *sendTool) Description() string         { return t.desc }
func (t *sendTool) Effect() carryon.EffectClass { return t.agent.cfg.Effect }
func (t *sendTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","minLength":1,` +
		`"description":"The message to the remote agent, as text."}},"required":["message"],"additionalProperties":false}`)
}

// Call sends the message on the session's remote conversation and waits for the reply.
func (t *sendTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	a := t.agent
	var args struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil || strings.TrimSpace(args.Message) == "" {
		return tool.Result{}, fmt.Errorf("the message to A2A agent %s is empty", a.cfg.Name)
	}
	_, ep, err := a.resolve(ctx)
	if err != nil {
		return tool.Result{}, fmt.Errorf("A2A agent %s cannot be reached, nothing was sent: %v", a.cfg.Name, err)
	}
	var res tool.Result
	contextID := ""
	if c.Journal != nil {
		fp, err := c.Journal.LastFingerprint(ctx)
		if err != nil {
			return tool.Result{}, fmt.Errorf("the conversation with A2A agent %s cannot be found in the journal, nothing was sent: %v", a.cfg.Name, err)
		}
		if id, ok := strings.CutPrefix(fp, contextPrefix); ok {
			contextID, res.FingerprintBefore = id, fp
		}
	}
	messageID := c.IdempotencyKey
	if messageID == "" {
		messageID = carryon.NewID("msg_")
	}
	cctx, cancel := context.WithTimeout(ctx, a.cfg.CallTimeout)
	defer cancel()
	rc := &rpcClient{agent: a, ep: ep}
	out, err := rc.send(cctx, messageID, contextID, args.Message)
	if err == nil && !out.settled() {
		out, err = rc.follow(cctx, out)
	}
	if out != nil && out.contextID != "" {
		res.FingerprintAfter = contextPrefix + out.contextID
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		msg := fmt.Sprintf("A2A agent %s did not answer within %s; the message may or may not have been acted on", a.cfg.Name, a.cfg.CallTimeout)
		if out != nil && out.taskID != "" {
			rc.cancelTask(ctx, out.taskID)
			msg += fmt.Sprintf(" (its task %s was asked to cancel)", out.taskID)
		}
		return res, errors.New(msg)
	}
	if err != nil {
		return res, err
	}
	switch out.state {
	case "", "completed":
		res.Content = out.text
		if res.Content == "" {
			res.Content = "(the remote agent answered no text)"
		}
		return res, nil
	case "input-required", "auth-required":
		rc.cancelTask(ctx, out.taskID)
		return res, fmt.Errorf("A2A agent %s needs input this tool cannot give (task %s is %s; it was canceled): %s",
			a.cfg.Name, out.taskID, out.state, orNone(out.text))
	default:
		return res, fmt.Errorf("A2A agent %s's task %s ended %s: %s", a.cfg.Name, out.taskID, out.state, orNone(out.text))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no message)"
	}
	return s
}

// outcome is what the tool reads of a task or a message the agent answered.
type outcome struct {
	taskID, contextID string
	// state is the task's state in 0.3's words (completed, input-required…), "" for a message.
	state string
	text  string
}

// settled reports whether the task ended or waits for input: no reason to wait longer.
func (o *outcome) settled() bool { return o.state != "submitted" && o.state != "working" }

// rpcClient calls one agent's JSON-RPC endpoint.
type rpcClient struct {
	agent *Agent
	ep    endpoint
}

type wirePart struct {
	Kind string          `json:"kind,omitempty"`
	Text *string         `json:"text,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

type wireMessage struct {
	Kind      string     `json:"kind,omitempty"`
	MessageID string     `json:"messageId"`
	ContextID string     `json:"contextId,omitempty"`
	TaskID    string     `json:"taskId,omitempty"`
	Role      string     `json:"role"`
	Parts     []wirePart `json:"parts"`
}

type wireTask struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string       `json:"state"`
		Message *wireMessage `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		Parts []wirePart `json:"parts"`
	} `json:"artifacts"`
}

// send sends the message (SendMessage, or 0.3's message/send).
func (r *rpcClient) send(ctx context.Context, messageID, contextID, text string) (*outcome, error) {
	m := wireMessage{MessageID: messageID, ContextID: contextID, Role: "ROLE_USER", Parts: []wirePart{{Text: &text}}}
	method := "SendMessage"
	if r.ep.legacy {
		m.Kind, m.Role, m.Parts[0].Kind, method = "message", "user", "text", "message/send"
	}
	params := map[string]any{"message": m, "configuration": map[string]any{"acceptedOutputModes": []string{"text/plain"}}}
	var raw json.RawMessage
	if err := r.call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	return readAnswer(raw)
}

// follow asks for the task until it settles or ctx ends, waiting a little longer each time.
func (r *rpcClient) follow(ctx context.Context, o *outcome) (*outcome, error) {
	method := "GetTask"
	if r.ep.legacy {
		method = "tasks/get"
	}
	wait := 250 * time.Millisecond
	for !o.settled() {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return o, ctx.Err()
		case <-timer.C:
		}
		wait = min(2*wait, 2*time.Second)
		var raw json.RawMessage
		if err := r.call(ctx, method, map[string]any{"id": o.taskID}, &raw); err != nil {
			return o, err
		}
		next, err := readAnswer(raw)
		if err != nil {
			return o, err
		}
		o = next
	}
	return o, nil
}

// cancelTask asks the agent to cancel a task, for a few seconds at most; its answer is not needed.
func (r *rpcClient) cancelTask(ctx context.Context, id string) {
	if id == "" {
		return
	}
	method := "CancelTask"
	if r.ep.legacy {
		method = "tasks/cancel"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	var raw json.RawMessage
	_ = r.call(ctx, method, map[string]any{"id": id}, &raw)
}

// readAnswer reads a send's or GetTask's result: 1.0's {task} or {message}, or a task or message
// as such (0.3's, with kind).
func readAnswer(raw json.RawMessage) (*outcome, error) {
	var wrap struct {
		Task    *wireTask    `json:"task"`
		Message *wireMessage `json:"message"`
		Kind    string       `json:"kind"`
		ID      string       `json:"id"`
	}
	if err := json.Unmarshal(raw, &wrap); err != nil {
		return nil, fmt.Errorf("the agent's answer is not a task or a message: %v", err)
	}
	switch {
	case wrap.Task != nil:
		return taskOutcome(wrap.Task), nil
	case wrap.Message != nil:
		return &outcome{taskID: wrap.Message.TaskID, contextID: wrap.Message.ContextID, text: textOf(wrap.Message.Parts)}, nil
	case wrap.Kind == "message":
		var m wireMessage
		_ = json.Unmarshal(raw, &m)
		return &outcome{taskID: m.TaskID, contextID: m.ContextID, text: textOf(m.Parts)}, nil
	case wrap.ID != "":
		var t wireTask
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("the agent's task: %v", err)
		}
		return taskOutcome(&t), nil
	}
	return nil, fmt.Errorf("the agent's answer is neither a task nor a message: %s", snippet(raw))
}

func taskOutcome(t *wireTask) *outcome {
	o := &outcome{taskID: t.ID, contextID: t.ContextID, state: normalState(t.Status.State)}
	var texts []string
	for _, a := range t.Artifacts {
		if s := textOf(a.Parts); s != "" {
			texts = append(texts, s)
		}
	}
	if o.state != "completed" || len(texts) == 0 {
		texts = nil
		if t.Status.Message != nil {
			texts = append(texts, textOf(t.Status.Message.Parts))
		}
	}
	o.text = strings.Join(texts, "\n\n")
	return o
}

// normalState says a state in 0.3's words: TASK_STATE_INPUT_REQUIRED is input-required.
func normalState(s string) string {
	s = strings.TrimPrefix(s, "TASK_STATE_")
	s = strings.ReplaceAll(strings.ToLower(s), "_", "-")
	if s == "cancelled" {
		s = "canceled"
	}
	return s
}

// textOf joins the text parts, and shows data parts as JSON.
func textOf(parts []wirePart) string {
	var out []string
	for _, p := range parts {
		switch {
		case p.Text != nil:
			out = append(out, *p.Text)
		case len(p.Data) > 0 && string(p.Data) != "null":
			out = append(out, string(p.Data))
		}
	}
	return strings.Join(out, "\n")
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// call makes one JSON-RPC call and decodes its result into out.
func (r *rpcClient) call(ctx context.Context, method string, params any, out *json.RawMessage) error {
	a := r.agent
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.ep.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if !r.ep.legacy {
		req.Header.Set("A2A-Version", "1.0")
	}
	for k, v := range a.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("A2A agent %s cannot be reached at %s: %v", a.cfg.Name, r.ep.url, err)
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body, maxAnswerBytes)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("A2A agent %s's answer to %s: %v", a.cfg.Name, method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	decodeErr := json.Unmarshal(b, &env)
	switch {
	case decodeErr == nil && env.Error != nil:
		msg := fmt.Sprintf("A2A agent %s answered %s with error %d: %s", a.cfg.Name, method, env.Error.Code, env.Error.Message)
		if resp.StatusCode != http.StatusOK {
			msg += fmt.Sprintf(" (HTTP %d)", resp.StatusCode)
		}
		return errors.New(msg)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("A2A agent %s answered %s with HTTP %d: %s", a.cfg.Name, method, resp.StatusCode, snippet(b))
	case decodeErr != nil || len(env.Result) == 0:
		return fmt.Errorf("A2A agent %s's answer to %s is not a JSON-RPC result: %s", a.cfg.Name, method, snippet(b))
	}
	*out = env.Result
	return nil
}
