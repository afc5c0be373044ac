package openaiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// Decoding goes through the input gate (internal/jsongate) as on the native routes: one JSON
// value of valid UTF-8, each name once in an object, no NUL, no lone surrogate, numbers within a
// 64-bit float, at most jsongate.MaxDepth levels deep, field names exactly as the specification
// spells them. The leniencies kept, each one the OpenAI API has too (docs/COMPAT.md lists them):
//
//   - every field the specification defines for a request body is accepted, and those carryon
//     has no use for are ignored (the request types list them); any other field, or one in
//     another case ({"ITEMS": …}), is refused naming it, as OpenAI refuses it;
//   - JSON nulls are absent values;
//   - the `include` query parameter and body field are accepted and ignored (no item carries
//     the extra data they ask for);
//   - `id` and `status` on input items are ignored: an item's id is its position, and a stored
//     item is completed;
//   - an input message item without `type` is a message (the Go SDK sends easy input messages so);
//   - a message's `content` may be a string (one text part) or a list of parts;
//   - items of types carryon does not map (reasoning, item references…) and content parts are
//     kept as sent, under the gate's rules, their fields unchecked.
//
// What a request must still be: JSON, an object, at most maxItems items, each with a known shape
// for the types mapped to messages (items.go); anything else is a 400 naming the field.

// maxItems is how many items one request may create.
const maxItems = 20

// decodeBody reads the request body into v through the input gate; an empty body is the zero
// value when optional. A body that does not arrive in time is the ETIMEOUT error httpapi's
// body timer gives (408, no socket address in it).
func decodeBody(r *http.Request, v any, optional bool) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return carryon.Errorf(carryon.ETOOLARGE, "the request body is larger than %d bytes", tooLarge.Limit)
		}
		if _, ok := carryon.AsError(err); ok {
			return err
		}
		return carryon.Errorf(carryon.EINVALID, "the request body could not be read")
	}
	if !utf8.Valid(b) {
		return carryon.Errorf(carryon.EINVALID, "the request body is not valid UTF-8")
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark, as RFC 8259 section 8.1 allows
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return carryon.Errorf(carryon.EINVALID, "the request needs a JSON body")
	}
	return gateError(jsongate.Decode(b, v), "")
}

// gateError is a refusal of the input gate as this door states it: an unknown field as OpenAI
// words it, every refusal with the field it names as the param. under prefixes the path (the
// item a value is in).
func gateError(err error, under string) error {
	var ge *jsongate.Error
	if !errors.As(err, &ge) {
		return err
	}
	param := ge.Path
	if under != "" {
		param = strings.TrimSuffix(under+"."+ge.Path, ".")
		if strings.HasPrefix(ge.Path, "[") {
			param = under + ge.Path
		}
	}
	if ge.Unknown {
		msg := fmt.Sprintf("Unknown parameter: '%s'.", param)
		if ge.Suggest != "" {
			msg += fmt.Sprintf(" Field names are case-sensitive: did you mean '%s'?", ge.Suggest)
		}
		return invalidParam(param, "%s", msg)
	}
	msg := ge.Error()
	if under != "" {
		msg = under + ": " + msg
	}
	if param == "" {
		return carryon.Errorf(carryon.EINVALID, "%s", msg)
	}
	return invalidParam(param, "%s", msg)
}

// metadataOf returns an OpenAI metadata object as session metadata: absent or null is nil
// (no change), otherwise an object of up to 16 string values.
func metadataOf(raw json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var m map[string]any // raw passed the gate with the body
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
	if err := gateError(jsongate.CheckValue(raw), at); err != nil {
		return carryon.NewMessage{}, err
	}
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&body); err != nil || body == nil {
		return carryon.NewMessage{}, invalidParam(at, "%s must be an item object", at)
	}
	if err := knownFields(body, at); err != nil {
		return carryon.NewMessage{}, err
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
		if err := gateError(jsongate.CheckValue([]byte(args)), at+".arguments"); err != nil {
			return carryon.NewMessage{}, err
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

// itemFields are the fields the specification defines for the item types carryon maps to
// messages (an input or output message, a function call, a function call's output).
var itemFields = map[string][]string{
	typeMessage:      {"type", "id", "role", "content", "status"},
	typeFunctionCall: {"type", "id", "call_id", "name", "arguments", "status"},
	typeFunctionOut:  {"type", "id", "call_id", "output", "status"},
}

// knownFields refuses a field of a mapped item that its type does not define.
func knownFields(body map[string]any, at string) error {
	typ, _ := body["type"].(string)
	if _, given := body["type"]; !given {
		typ = typeMessage
	}
	fields, ok := itemFields[typ]
	if !ok {
		return nil
	}
	names := make([]string, 0, len(body))
	for k := range body {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if slices.Contains(fields, k) {
			continue
		}
		msg := fmt.Sprintf("Unknown parameter: '%s.%s'.", at, k)
		for _, f := range fields {
			if strings.EqualFold(f, k) {
				msg += fmt.Sprintf(" Field names are case-sensitive: did you mean '%s'?", f)
			}
		}
		return invalidParam(at+"."+k, "%s", msg)
	}
	return nil
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
