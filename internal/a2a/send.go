package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// sendParams are the params of SendMessage and SendStreamingMessage (1.0's SendMessageRequest,
// 0.3's MessageSendParams).
type sendParams struct {
	Tenant        string          `json:"tenant"`
	Message       *message        `json:"message"`
	Configuration *sendConfig     `json:"configuration"`
	Metadata      json.RawMessage `json:"metadata"`
}

// sendConfig is a send's configuration. Output modes and the history length are accepted and
// ignored (the reply is text; a task carries no history); push notifications are refused.
type sendConfig struct {
	AcceptedOutputModes        []string        `json:"acceptedOutputModes"`
	TaskPushNotificationConfig json.RawMessage `json:"taskPushNotificationConfig"`
	PushNotificationConfig     json.RawMessage `json:"pushNotificationConfig"`
	HistoryLength              *int            `json:"historyLength"`
	ReturnImmediately          *bool           `json:"returnImmediately"`
	Blocking                   *bool           `json:"blocking"`
}

// carryonMetadata is what carryon reads of a send's metadata, under "carryon": the client's own
// tools (carryon.ClientTool), which a task calls by stopping in input-required.
type carryonMetadata struct {
	Tools []carryon.ClientTool `json:"tools"`
}

// answerData is a data part that answers an input-required task: a decision on an approval, or
// the outputs of client tool calls.
type answerData struct {
	Decision carryon.Decision     `json:"decision"`
	Reason   string               `json:"reason"`
	Outputs  []carryon.ToolOutput `json:"outputs"`
}

// content is what a message says: its text parts joined, and its data parts.
type content struct {
	text  string
	datas []json.RawMessage
}

// contentOf reads a message's parts; files are refused (carryon's messages are text).
func contentOf(m *message) (content, error) {
	var c content
	var texts []string
	for i, p := range m.Parts {
		switch {
		case p.Text != nil:
			texts = append(texts, *p.Text)
		case len(p.Data) > 0 && !bytes.Equal(bytes.TrimSpace(p.Data), []byte("null")):
			c.datas = append(c.datas, p.Data)
		case p.Raw != "" || p.URL != "" || len(p.File) > 0 || p.Kind == "file":
			return c, rpcErr(codeContentType, "message.parts[%d] is a file: carryon's agents take text and data parts only", i)
		default:
			return c, rpcErr(codeInvalidParams, "message.parts[%d] has no content: a part has text, data, raw or url", i)
		}
	}
	c.text = strings.Join(texts, "\n")
	return c, nil
}

// deliver applies a send: it starts a task (a run) on the message's context, a new one when it
// names none, or answers the task the message names, which waits for input. It returns the
// run. The messageId is the request id of the write, so a repeated send is applied once.
func (h *Handler) deliver(ctx context.Context, agent string, p sendParams) (string, error) {
	m := p.Message
	switch {
	case m == nil:
		return "", rpcErr(codeInvalidParams, "params.message is required")
	case m.Role != "ROLE_USER" && m.Role != "user":
		return "", rpcErr(codeInvalidParams, "message.role must be ROLE_USER (user in A2A 0.3), not %q: the client speaks for the user", m.Role)
	case m.MessageID == "":
		return "", rpcErr(codeInvalidParams, "message.messageId is required: it is the request id that makes a retried send apply once")
	case len(m.Parts) == 0:
		return "", rpcErr(codeInvalidParams, "message.parts is empty")
	}
	if c := p.Configuration; c != nil && (hasValue(c.TaskPushNotificationConfig) || hasValue(c.PushNotificationConfig)) {
		return "", rpcErr(codePushNotSupported, "push notifications are not supported: stream the task instead")
	}
	c, err := contentOf(m)
	if err != nil {
		return "", err
	}
	if m.TaskID != "" {
		return h.answer(ctx, m, c)
	}
	var meta struct {
		Carryon *carryonMetadata `json:"carryon"`
	}
	if hasValue(p.Metadata) {
		// Only carryon's own key is read; other keys are the client's and are kept with the run.
		var probe map[string]json.RawMessage
		if json.Unmarshal(p.Metadata, &probe) != nil {
			return "", rpcErr(codeInvalidParams, "params.metadata must be an object")
		}
		if raw, ok := probe["carryon"]; ok {
			var cm carryonMetadata
			if err := jsongate.Decode(raw, &cm); err != nil {
				return "", rpcErr(codeInvalidParams, "params.metadata.carryon: %v", err)
			}
			meta.Carryon = &cm
		}
	}
	if strings.TrimSpace(c.text) == "" {
		return "", rpcErr(codeInvalidParams, "a message that starts a task needs a text part")
	}
	if len(c.datas) > 0 {
		return "", rpcErr(codeInvalidParams, "data parts answer a task that waits for input: send them with that task's taskId")
	}
	var tools []carryon.ClientTool
	if meta.Carryon != nil {
		tools = meta.Carryon.Tools
	}
	sessionID, made := m.ContextID, false
	if sessionID == "" {
		s, err := h.sessions.Create(ctx, carryon.NewSession{Title: clip(c.text), TitleDerived: true, Agent: agent,
			WriteOptions: carryon.WriteOptions{RequestID: m.MessageID + "#context"}})
		if err != nil {
			return "", err
		}
		sessionID, made = s.ID, true
	}
	runMeta, _ := json.Marshal(map[string]any{"a2a": map[string]any{"message_id": m.MessageID}})
	run, err := h.runs.Start(ctx, sessionID, carryon.NewRun{Message: c.text, Tools: tools, Agent: agent, Metadata: runMeta,
		Multitask: carryon.MultitaskReject, WriteOptions: carryon.WriteOptions{RequestID: m.MessageID}})
	if err != nil {
		code := carryon.ErrorCode(err)
		if made && code == carryon.EINVALID {
			_ = h.sessions.Delete(ctx, sessionID, carryon.WriteOptions{}) // a refused send leaves nothing behind
		}
		switch code {
		case carryon.ENOTFOUND:
			return "", rpcErr(codeTaskNotFound, "context %s not found", sessionID)
		case carryon.EBUSY:
			return "", rpcErr(codeUnsupported, "context %s has a task in progress: wait for it, cancel it, or answer it with its taskId (%s)", sessionID, carryon.ErrorMessage(err))
		}
		return "", err
	}
	return run.ID, nil
}

// answer applies a message on a task that waits for input: a decision on the action that waits
// for approval, or the outputs of the client tool calls. A message whose messageId was used
// already is not applied again: it answers the task as it is.
func (h *Handler) answer(ctx context.Context, m *message, c content) (string, error) {
	run, err := h.runs.GetRun(ctx, m.TaskID)
	if err != nil {
		return "", taskErr(err, m.TaskID)
	}
	if m.ContextID != "" && m.ContextID != run.SessionID {
		return "", rpcErr(codeInvalidParams, "task %s is not a task of context %s", m.TaskID, m.ContextID)
	}
	if h.requests != nil {
		if session, used, err := h.requests.RequestIDUsed(ctx, m.MessageID); err != nil {
			return "", err
		} else if used && session != "" && session != run.SessionID {
			return "", rpcErr(codeInvalidParams, "messageId %s was used for a message of another context: a new message needs a new messageId", m.MessageID)
		} else if used {
			return run.ID, nil
		}
	}
	var ad answerData
	if len(c.datas) > 1 {
		return "", rpcErr(codeInvalidParams, "message.parts has %d data parts; an answer has at most one", len(c.datas))
	}
	if len(c.datas) == 1 {
		if err := jsongate.Decode(c.datas[0], &ad); err != nil {
			return "", rpcErr(codeInvalidParams, "the data part: %v", err)
		}
	}
	retry := carryon.RetryOptions{RequestID: m.MessageID}
	switch {
	case run.Status == carryon.RunWaitingApproval && (run.PendingAction != nil || run.BudgetStop != nil):
		decision := ad.Decision
		if decision == "" {
			switch strings.ToLower(strings.TrimSpace(c.text)) {
			case "approve", "approved", "yes":
				decision = carryon.DecisionApprove
			case "reject", "rejected", "no":
				decision = carryon.DecisionReject
			}
		}
		what, actionID := "a decision on its budget stop", ""
		if run.PendingAction != nil {
			what, actionID = "approval of "+run.PendingAction.Tool, run.PendingAction.ID
		}
		if decision != carryon.DecisionApprove && decision != carryon.DecisionReject {
			return "", rpcErr(codeInvalidParams, "task %s waits for %s: answer approve or reject (text, or a data part {\"decision\": …})", run.ID, what)
		}
		if ad.Reason != "" && decision != carryon.DecisionReject {
			return "", rpcErr(codeInvalidParams, "a reason goes with reject only")
		}
		if _, err := h.runs.Approve(ctx, run.ID, carryon.Approval{ActionID: actionID, Decision: decision, Reason: ad.Reason, RetryOptions: retry}); err != nil {
			return "", taskErr(err, run.ID)
		}
	case run.Status == carryon.RunRequiresAction && run.RequiredAction != nil:
		outs := ad.Outputs
		if len(outs) == 0 && len(run.RequiredAction.ToolCalls) == 1 && c.text != "" {
			outs = []carryon.ToolOutput{{CallID: run.RequiredAction.ToolCalls[0].CallID, Output: c.text}}
		}
		if len(outs) == 0 {
			return "", rpcErr(codeInvalidParams, "task %s waits for the outputs of %d tool calls: send a data part {\"outputs\": [{\"call_id\": …, \"output\": …}]}", run.ID, len(run.RequiredAction.ToolCalls))
		}
		if _, err := h.runs.SubmitToolOutputs(ctx, run.ID, carryon.ToolOutputs{Outputs: outs, RetryOptions: retry}); err != nil {
			return "", taskErr(err, run.ID)
		}
	case run.Status.Terminal():
		return "", rpcErr(codeUnsupported, "task %s has ended (%s) and takes no more messages: send the next message with contextId %s and no taskId to continue the conversation", run.ID, run.Status, run.SessionID)
	default:
		return "", rpcErr(codeUnsupported, "task %s is %s and waits for no input: wait for it (GetTask, SubscribeToTask) or cancel it", run.ID, run.Status)
	}
	return run.ID, nil
}

// hasValue reports whether a raw JSON value is given and not null.
func hasValue(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// clip is the start of s, as a session's title.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
