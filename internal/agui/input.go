package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// runInput is AG-UI's RunAgentInput (@ag-ui/core 1.0.0): every field the schema defines, and no
// other; a field the schema does not define is refused naming it (jsongate).
type runInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion"`
	ParentRunID     string          `json:"parentRunId"`
	State           json.RawMessage `json:"state"`
	Messages        []message       `json:"messages"`
	Tools           []clientTool    `json:"tools"`
	Context         []contextEntry  `json:"context"`
	ForwardedProps  json.RawMessage `json:"forwardedProps"`
	Resume          []resumeEntry   `json:"resume"`
}

// message is one AG-UI message of any role (the schema's union, by role).
type message struct {
	ID             string          `json:"id"`
	Role           string          `json:"role"`
	Content        json.RawMessage `json:"content"`
	Name           string          `json:"name"`
	ToolCalls      []toolCall      `json:"toolCalls"`
	ToolCallID     string          `json:"toolCallId"`
	Error          string          `json:"error"`
	EncryptedValue string          `json:"encryptedValue"`
	ActivityType   string          `json:"activityType"`
	SubagentRunID  string          `json:"subagentRunId"`
	Metadata       json.RawMessage `json:"metadata"`
}

// toolCall is a call in an AG-UI assistant message.
type toolCall struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Function       function        `json:"function"`
	EncryptedValue string          `json:"encryptedValue"`
	Metadata       json.RawMessage `json:"metadata"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// clientTool is a tool the client runs (a frontend tool).
type clientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Metadata    json.RawMessage `json:"metadata"`
}

type contextEntry struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// resumeEntry answers an interrupt of the run before (here: an action waiting for approval).
type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
	Metadata    json.RawMessage `json:"metadata"`
}

// carryonProps is what carryon reads of forwardedProps: its "carryon" member.
type carryonProps struct {
	ExpectedVersion *int64 `json:"expected_version"`
	Agent           string `json:"agent"`
}

// decodeInput reads the request body through the input gate and checks what every input must
// be; nothing is written before it passed.
func decodeInput(r *http.Request) (*runInput, error) {
	if err := checkMediaType(r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, carryon.Errorf(carryon.ETOOLARGE, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		if _, ok := carryon.AsError(err); ok {
			return nil, err // httpapi's body timer
		}
		return nil, carryon.Errorf(carryon.EINVALID, "the request body could not be read")
	}
	if !utf8.Valid(b) {
		return nil, carryon.Errorf(carryon.EINVALID, "the request body is not valid UTF-8")
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, carryon.Errorf(carryon.EINVALID, "the request needs a JSON body: an AG-UI RunAgentInput")
	}
	var in runInput
	if err := jsongate.Decode(b, &in); err != nil {
		var ge *jsongate.Error
		if errors.As(err, &ge) {
			return nil, carryon.Errorf(carryon.EINVALID, "RunAgentInput: %s", ge.Error())
		}
		return nil, err
	}
	switch {
	case in.ThreadID == "":
		return nil, carryon.Errorf(carryon.EINVALID, "threadId is required")
	case len(in.ThreadID) > carryon.MaxExternalIDLen:
		return nil, carryon.Errorf(carryon.EINVALID, "threadId is longer than %d characters", carryon.MaxExternalIDLen)
	case in.RunID == "":
		return nil, carryon.Errorf(carryon.EINVALID, "runId is required")
	case len(in.RunID) > maxRunIDLen:
		return nil, carryon.Errorf(carryon.EINVALID, "runId is longer than %d characters", maxRunIDLen)
	case in.Messages == nil:
		return nil, carryon.Errorf(carryon.EINVALID, "messages is required (a list, possibly empty)")
	}
	for i, m := range in.Messages {
		if err := checkMessage(m, i); err != nil {
			return nil, err
		}
	}
	for i, e := range in.Resume {
		if e.InterruptID == "" || (e.Status != "resolved" && e.Status != "cancelled") {
			return nil, carryon.Errorf(carryon.EINVALID, "resume[%d] needs an interruptId and a status resolved or cancelled", i)
		}
	}
	if len(in.Resume) > 1 {
		return nil, carryon.Errorf(carryon.EINVALID, "resume has %d entries: a carryon run waits for one decision at a time", len(in.Resume))
	}
	if t := bytes.TrimSpace(in.State); len(t) > 0 && !bytes.Equal(t, []byte("null")) && t[0] != '{' {
		return nil, carryon.Errorf(carryon.EINVALID, "state must be an object (a JSON merge patch on the thread's working memory)")
	}
	return &in, nil
}

// checkMediaType accepts application/json (a charset, when given, must be UTF-8), as the
// native API does; none at all is taken as JSON too, as HttpAgent always sends it but curl
// users often forget it.
func checkMediaType(ct string) error {
	if ct == "" {
		return nil
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return carryon.Errorf(carryon.EUNSUPPORTED, "malformed Content-Type %q; send application/json", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return carryon.Errorf(carryon.EUNSUPPORTED, "charset %q is not supported; send UTF-8", cs)
	}
	if media != "application/json" {
		return carryon.Errorf(carryon.EUNSUPPORTED, "Content-Type %q is not supported; send application/json (a RunAgentInput)", media)
	}
	return nil
}

// maxRunIDLen leaves room under carryon.MaxRequestIDLength for the suffixes of the run's other
// writes ("#state").
const maxRunIDLen = carryon.MaxRequestIDLength - 8

// checkMessage checks one input message's shape by role.
func checkMessage(m message, i int) error {
	switch {
	case m.ID == "":
		return carryon.Errorf(carryon.EINVALID, "messages[%d].id is required", i)
	case m.Role == "":
		return carryon.Errorf(carryon.EINVALID, "messages[%d].role is required", i)
	}
	switch m.Role {
	case "user", "system", "developer":
		if _, err := textOf(m.Content, fmt.Sprintf("messages[%d].content", i)); err != nil {
			return err
		}
	case "assistant":
		if len(m.Content) > 0 && !isNull(m.Content) {
			if _, err := textOf(m.Content, fmt.Sprintf("messages[%d].content", i)); err != nil {
				return err
			}
		}
		for j, c := range m.ToolCalls {
			if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
				return carryon.Errorf(carryon.EINVALID, "messages[%d].toolCalls[%d] needs an id, type function and function.name", i, j)
			}
			if a := strings.TrimSpace(c.Function.Arguments); a != "" && !json.Valid([]byte(a)) {
				return carryon.Errorf(carryon.EINVALID, "messages[%d].toolCalls[%d].function.arguments is not JSON", i, j)
			}
		}
	case "tool":
		if m.ToolCallID == "" {
			return carryon.Errorf(carryon.EINVALID, "messages[%d].toolCallId is required for a tool message", i)
		}
		if _, err := textOf(m.Content, fmt.Sprintf("messages[%d].content", i)); err != nil {
			return err
		}
	case "activity", "reasoning":
		// The client's own: not part of carryon's history (docs/AGUI.md).
	default:
		return carryon.Errorf(carryon.EINVALID, "messages[%d].role %q is not an AG-UI role (user, system, developer, assistant, tool, activity, reasoning)", i, m.Role)
	}
	return nil
}

// textOf is a message content's text: a string, or a list of parts of which carryon takes text
// parts only (it stores text).
func textOf(raw json.RawMessage, field string) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", carryon.Errorf(carryon.EINVALID, "%s is required", field)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", carryon.Errorf(carryon.EINVALID, "%s must be a string or a list of content parts", field)
	}
	var texts []string
	for j, p := range parts {
		if p.Type != "text" {
			return "", carryon.Errorf(carryon.EINVALID, "%s[%d] is a %q part: carryon stores text, so only text parts are taken", field, j, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// props reads forwardedProps.carryon; other members of forwardedProps are the client's and
// ignored.
func props(raw json.RawMessage) (carryonProps, error) {
	var p carryonProps
	if len(raw) == 0 || isNull(raw) {
		return p, nil
	}
	var fp map[string]json.RawMessage
	if json.Unmarshal(raw, &fp) != nil {
		return p, carryon.Errorf(carryon.EINVALID, "forwardedProps must be an object")
	}
	c, ok := fp["carryon"]
	if !ok || isNull(c) {
		return p, nil
	}
	if err := jsongate.Decode(c, &p); err != nil {
		return p, carryon.Errorf(carryon.EINVALID, "forwardedProps.carryon: %v (it takes expected_version and agent)", err)
	}
	return p, nil
}
