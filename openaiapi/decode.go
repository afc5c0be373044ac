package openaiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Lenient decoding, on these routes only (the native API refuses unknown fields). The OpenAI
// SDKs send fields this server has no use for, and the specification lets a server ignore them:
//
//   - unknown fields of a body or an item, and JSON nulls, are ignored;
//   - the `include` query parameter and body field are accepted and ignored (no item carries
//     the extra data they ask for);
//   - `id` and `status` on input items are ignored: an item's id is its position, and a stored
//     item is completed;
//   - an input message item without `type` is a message (the Go SDK sends easy input messages so);
//   - a message's `content` may be a string (one text part) or a list of parts.
//
// What a request must still be: JSON, an object, at most maxItems items, each with a known shape
// for the types mapped to messages (items.go); anything else is a 400 naming the field.

// maxItems is how many items one request may create.
const maxItems = 20

// decodeBody reads the request body into v; an empty body is the zero value when optional.
func decodeBody(r *http.Request, v any, optional bool) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return carryon.Errorf(carryon.ETOOLARGE, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		return carryon.Errorf(carryon.EINVALID, "reading the request body: %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return carryon.Errorf(carryon.EINVALID, "the request needs a JSON body")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return carryon.Errorf(carryon.EINVALID, "the request body is not the JSON object this route takes: %v", err)
	}
	return nil
}

// metadataOf returns an OpenAI metadata object as session metadata: absent or null is nil
// (no change), otherwise an object of up to 16 string values.
func metadataOf(raw json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalidParam("metadata", "metadata must be an object of string values")
	}
	if len(m) > 16 {
		return nil, invalidParam("metadata", "metadata has %d keys; at most 16 are allowed", len(m))
	}
	for k, v := range m {
		s, ok := v.(string)
		switch {
		case !ok:
			return nil, invalidParam("metadata", "metadata.%s must be a string", k)
		case len(k) > 64:
			return nil, invalidParam("metadata", "metadata key %q is longer than 64 characters", k)
		case len(s) > 512:
			return nil, invalidParam("metadata", "metadata.%s is longer than 512 characters", k)
		}
	}
	return raw, nil
}

// messagesOf maps input items to the messages that store them (items.go). param names the list
// in errors ("items").
func messagesOf(raws []json.RawMessage, param string) ([]carryon.NewMessage, error) {
	switch {
	case len(raws) > maxItems:
		return nil, invalidParam(param, "%s has %d items; at most %d may be added at once", param, len(raws), maxItems)
	}
	out := make([]carryon.NewMessage, 0, len(raws))
	for i, raw := range raws {
		at := fmt.Sprintf("%s[%d]", param, i)
		m, err := messageOf(raw, at)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// messageOf maps one input item to its message.
func messageOf(raw json.RawMessage, at string) (carryon.NewMessage, error) {
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&body); err != nil || body == nil {
		return carryon.NewMessage{}, invalidParam(at, "%s must be an item object", at)
	}
	delete(body, "id")
	delete(body, "status")
	for k, v := range body {
		if v == nil {
			delete(body, k)
		}
	}
	typ, _ := body["type"].(string)
	if _, given := body["type"]; given && typ == "" {
		return carryon.NewMessage{}, invalidParam(at+".type", "%s.type must be a string", at)
	}
	if typ == "" {
		typ = typeMessage
		body["type"] = typ
	}
	meta, err := json.Marshal(map[string]any{itemKey: body})
	if err != nil {
		return carryon.NewMessage{}, invalidParam(at, "%s cannot be stored: %v", at, err)
	}
	m := carryon.NewMessage{Metadata: meta}
	switch typ {
	case typeMessage:
		role, _ := body["role"].(string)
		switch role {
		case "user":
			m.Role = carryon.RoleUser
		case "assistant":
			m.Role = carryon.RoleAssistant
		case "system", "developer":
			m.Role = carryon.RoleSystem
		default:
			return carryon.NewMessage{}, invalidParam(at+".role", "%s.role must be user, system, developer or assistant, not %q", at, role)
		}
		text, err := textOf(body["content"], at+".content")
		if err != nil {
			return carryon.NewMessage{}, err
		}
		if text == "" && !hasParts(body["content"]) {
			return carryon.NewMessage{}, invalidParam(at+".content", "%s.content is empty", at)
		}
		m.Content = text
	case typeFunctionCall:
		callID, _ := body["call_id"].(string)
		name, _ := body["name"].(string)
		args, _ := body["arguments"].(string)
		if callID == "" || name == "" {
			return carryon.NewMessage{}, invalidParam(at, "%s (a function_call) needs call_id and name", at)
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			return carryon.NewMessage{}, invalidParam(at+".arguments", "%s.arguments must be a JSON object in a string", at)
		}
		calls, _ := json.Marshal([]carryon.ToolCall{{ID: callID, Name: name, Arguments: json.RawMessage(args)}})
		m.Role, m.ToolCalls = carryon.RoleAssistant, calls
	case typeFunctionOut:
		callID, _ := body["call_id"].(string)
		if callID == "" {
			return carryon.NewMessage{}, invalidParam(at+".call_id", "%s (a function_call_output) needs call_id", at)
		}
		text, err := textOf(body["output"], at+".output")
		if err != nil {
			return carryon.NewMessage{}, err
		}
		m.Role, m.ToolCallID, m.Content = carryon.RoleTool, callID, text
	default:
		// Kept as it came, out of the model's context (no content, no tool calls).
		m.Role = carryon.RoleAssistant
	}
	return m, nil
}

// textOf is the text of a content value: a string, or the text of its text parts joined.
func textOf(v any, at string) (string, error) {
	switch c := v.(type) {
	case nil:
		return "", nil
	case string:
		return c, nil
	case []any:
		var parts []string
		for i, p := range c {
			part, ok := p.(map[string]any)
			if !ok {
				return "", invalidParam(fmt.Sprintf("%s[%d]", at, i), "%s[%d] must be a content part object", at, i)
			}
			switch part["type"] {
			case "input_text", "output_text", "text", "summary_text", "reasoning_text", "refusal":
				if t, ok := part["text"].(string); ok {
					parts = append(parts, t)
				} else if t, ok := part["refusal"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", invalidParam(at, "%s must be a string or a list of content parts", at)
}

// hasParts reports whether a content value is a non-empty list (parts without text, such as
// an image, still make a message).
func hasParts(v any) bool { l, ok := v.([]any); return ok && len(l) > 0 }
