package aisdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// chatRequest is the body the AI SDK's HttpChatTransport posts: the chat id, every message of
// the chat as UI messages, the trigger and the message id of a regeneration, and the fields
// this door adds to the body (useChat's body option): the client's tools and the agent.
// Any other field is refused, naming it (the input gate).
type chatRequest struct {
	ID        string          `json:"id"`
	Messages  []uiMessage     `json:"messages"`
	Trigger   string          `json:"trigger"`
	MessageID *string         `json:"messageId"`
	Tools     map[string]tool `json:"tools"`
	Agent     string          `json:"agent"`
}

// tool is a client tool as the body names it: the AI SDK's tool shape without execute.
type tool struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// uiMessage is one UI message of the chat.
type uiMessage struct {
	ID       string            `json:"id"`
	Role     string            `json:"role"`
	Parts    []json.RawMessage `json:"parts"`
	Metadata json.RawMessage   `json:"metadata"`
}

// part is the fields of a UI message part this door reads; the others (providerMetadata,
// title…) are ignored, as the AI SDK's schema allows them.
type part struct {
	Type       string          `json:"type"`
	Text       *string         `json:"text"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	State      string          `json:"state"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   *struct {
		ID       string `json:"id"`
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	} `json:"approval"`
}

// Triggers of a chat request.
const (
	triggerSubmit     = "submit-message"
	triggerRegenerate = "regenerate-message"
)

// maxMessages bounds the UI messages of one request (the whole chat the client holds).
const maxMessages = 10000

// decodeChat reads and checks a chat request's body.
func decodeChat(r *http.Request) (*chatRequest, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, carryon.Errorf(carryon.ETOOLARGE, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		if _, ok := carryon.AsError(err); ok {
			return nil, err
		}
		return nil, invalid("the request body could not be read")
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, carryon.Errorf(carryon.EUNSUPPORTED, "the request body must be application/json, not %s", ct)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, invalid("the request needs a JSON body: {id, messages, trigger}")
	}
	var req chatRequest
	if err := jsongate.Decode(b, &req); err != nil {
		var ge *jsongate.Error
		if errors.As(err, &ge) {
			return nil, invalid("%s", ge.Error())
		}
		return nil, err
	}
	if req.ID == "" {
		return nil, invalid("id (the chat id) is required")
	}
	if len(req.ID) > carryon.MaxExternalIDLen {
		return nil, invalid("id is longer than %d characters", carryon.MaxExternalIDLen)
	}
	switch req.Trigger {
	case "", triggerSubmit:
	case triggerRegenerate:
		return nil, invalid("trigger regenerate-message is not supported: carryon keeps a session's history and does not replace an answer; send a new message instead")
	default:
		return nil, invalid("trigger must be submit-message or regenerate-message, not %q", req.Trigger)
	}
	if len(req.Messages) == 0 {
		return nil, invalid("messages must hold at least the new message")
	}
	if len(req.Messages) > maxMessages {
		return nil, invalid("messages holds %d messages; at most %d are accepted", len(req.Messages), maxMessages)
	}
	for i, m := range req.Messages {
		if err := checkMessage(m, fmt.Sprintf("messages[%d]", i)); err != nil {
			return nil, err
		}
	}
	return &req, nil
}

// checkMessage checks a UI message's role and the shape of each of its parts.
func checkMessage(m uiMessage, at string) error {
	switch m.Role {
	case "user", "assistant", "system":
	default:
		return invalid("%s.role must be user, assistant or system, not %q", at, m.Role)
	}
	for j, raw := range m.Parts {
		if _, err := parsePart(raw, fmt.Sprintf("%s.parts[%d]", at, j)); err != nil {
			return err
		}
	}
	return nil
}

// parsePart reads one part. A part of a type the AI SDK does not define is refused; the types
// it defines are accepted in any message (the client sends its whole chat), and what this door
// takes from them is only in the last message (lastUserText, answers).
func parsePart(raw json.RawMessage, at string) (part, error) {
	var p part
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, invalid("%s must be a UI message part object with a type", at)
	}
	switch {
	case p.Type == "text" || p.Type == "reasoning":
		if p.Text == nil {
			return p, invalid("%s is a %s part without text", at, p.Type)
		}
	case p.Type == "file", p.Type == "reasoning-file", p.Type == "source-url", p.Type == "source-document", p.Type == "step-start", p.Type == "custom":
	case strings.HasPrefix(p.Type, "data-") && len(p.Type) > len("data-"):
	case p.Type == "dynamic-tool" || strings.HasPrefix(p.Type, "tool-") && len(p.Type) > len("tool-"):
		if p.ToolCallID == "" {
			return p, invalid("%s is a %s part without toolCallId", at, p.Type)
		}
		if !slices.Contains(toolStates, p.State) {
			return p, invalid("%s.state must be one of %s, not %q", at, strings.Join(toolStates, ", "), p.State)
		}
		if p.State == "approval-responded" && (p.Approval == nil || p.Approval.ID == "" || p.Approval.Approved == nil) {
			return p, invalid("%s is approval-responded without approval {id, approved}", at)
		}
	case p.Type == "":
		return p, invalid("%s has no type", at)
	default:
		return p, invalid("%s has type %q, which is not a UI message part type", at, p.Type)
	}
	return p, nil
}

// toolStates are the states of a tool part.
var toolStates = []string{"input-streaming", "input-available", "approval-requested", "approval-responded", "output-available", "output-error", "output-denied"}

// userText is the text of a user message: its text parts, joined by blank lines. A file part is
// refused (carryon's messages are text); the other parts carry nothing carryon stores.
func userText(m uiMessage) (string, error) {
	var texts []string
	for j, raw := range m.Parts {
		p, _ := parsePart(raw, "")
		switch p.Type {
		case "text":
			texts = append(texts, *p.Text)
		case "file":
			return "", invalid("messages[-1].parts[%d] is a file part: carryon stores text messages only", j)
		}
	}
	text := strings.Join(texts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", invalid("the new user message has no text")
	}
	return text, nil
}

// clientTools are the body's tools as carryon client tools, in name order.
func (req *chatRequest) clientTools() []carryon.ClientTool {
	var out []carryon.ClientTool
	for name, t := range req.Tools {
		out = append(out, carryon.ClientTool{Name: name, Description: t.Description, Parameters: t.InputSchema})
	}
	slices.SortFunc(out, func(a, b carryon.ClientTool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// outputText is a client tool's output as carryon stores it: a JSON string as its text, any
// other JSON value as its JSON text.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 {
		return "null"
	}
	return string(raw)
}
