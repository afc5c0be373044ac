package openaiapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Items and messages. An item a client creates becomes one message, and the message keeps the
// item as it was sent (without id and status) in its metadata under itemKey, so that reading
// it back gives the same item: the mapping is lossless. What the model reads is in the
// message's own fields:
//
//   - message (roles user, system, developer, assistant): a message of that role (developer is
//     system) whose content is the text of its input_text / output_text / text parts;
//   - function_call: an assistant message with one tool call {id: call_id, name, arguments};
//   - function_call_output: a tool message answering call_id, its output as content (an empty
//     output is allowed);
//   - any other type: a message with no content, only the item in its metadata, which the
//     context builder leaves out of what the model is sent.
//
// Messages written otherwise (the native API, runs) read as items too: an assistant message
// gives a message item for its text and a function_call item per tool call; a tool message a
// function_call_output. Summaries and metadata-only messages of other writers are no items.
//
// An item id names its position: the message's seq and the item's index among the items of that
// message, so that `after` pages exactly and an item id decodes back to its message.

// itemKey is the metadata key under which a message keeps the item it was made from.
const itemKey = "openai_item"

// Item types this package maps to messages of their own shape.
const (
	typeMessage      = "message"
	typeFunctionCall = "function_call"
	typeFunctionOut  = "function_call_output"
)

// itemPos is an item's position: its message's seq and its index among that message's items.
type itemPos struct {
	seq int64
	sub int
}

// less orders positions as the conversation does.
func (p itemPos) less(q itemPos) bool { return p.seq < q.seq || p.seq == q.seq && p.sub < q.sub }

// itemID is the id of the item at p of type typ: a prefix by type, then the seq and index.
func itemID(typ string, p itemPos) string {
	prefix := "item"
	switch typ {
	case typeMessage:
		prefix = "msg"
	case typeFunctionCall:
		prefix = "fc"
	case typeFunctionOut:
		prefix = "fco"
	}
	return prefix + "_" + strconv.FormatInt(p.seq, 10) + "_" + strconv.Itoa(p.sub)
}

// parseItemID decodes an id itemID made; false for anything else.
func parseItemID(id string) (itemPos, bool) {
	prefix, rest, ok := strings.Cut(id, "_")
	switch prefix {
	case "msg", "fc", "fco", "item":
	default:
		return itemPos{}, false
	}
	seqText, subText, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 {
		return itemPos{}, false
	}
	seq, err1 := strconv.ParseInt(seqText, 10, 64)
	sub, err2 := strconv.Atoi(subText)
	if err1 != nil || err2 != nil || seq < 1 || sub < 0 || strconv.FormatInt(seq, 10) != seqText || strconv.Itoa(sub) != subText {
		return itemPos{}, false
	}
	return itemPos{seq, sub}, true
}

// item is one conversation item as answered: its JSON object with id and status set.
type item struct {
	pos  itemPos
	body map[string]any
}

// MarshalJSON answers the item's object.
func (it item) MarshalJSON() ([]byte, error) { return json.Marshal(it.body) }

func (it item) id() string { s, _ := it.body["id"].(string); return s }

// itemsOf returns the items message m reads as, in order.
func itemsOf(m *carryon.Message) []item {
	if m.Kind == carryon.KindSummary {
		return nil
	}
	if stored := storedItem(m); stored != nil {
		return []item{finish(stored, itemPos{m.Seq, 0})}
	}
	var out []item
	add := func(body map[string]any) {
		out = append(out, finish(body, itemPos{m.Seq, len(out)}))
	}
	switch m.Role {
	case carryon.RoleTool:
		add(map[string]any{"type": typeFunctionOut, "call_id": m.ToolCallID, "output": m.Content})
		return out
	case carryon.RoleAssistant:
		if m.Content != "" {
			add(messageItem("assistant", m.Content))
		}
		var calls []carryon.ToolCall
		if json.Unmarshal(m.ToolCalls, &calls) == nil {
			for _, c := range calls {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				add(map[string]any{"type": typeFunctionCall, "call_id": c.ID, "name": c.Name, "arguments": args})
			}
		}
		return out
	}
	if m.Content != "" {
		add(messageItem(string(m.Role), m.Content))
	}
	return out
}

// messageItem is a message item of role with one text part.
func messageItem(role, text string) map[string]any {
	part := map[string]any{"type": "input_text", "text": text}
	if role == "assistant" {
		part = map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	}
	return map[string]any{"type": typeMessage, "role": role, "content": []any{part}}
}

// finish sets the id and status an answered item carries.
func finish(body map[string]any, p itemPos) item {
	typ, _ := body["type"].(string)
	body["id"] = itemID(typ, p)
	if text, ok := body["content"].(string); ok && typ == typeMessage {
		// An input message may say its content as a string; a stored item says it as parts.
		role, _ := body["role"].(string)
		body["content"] = messageItem(role, text)["content"]
	}
	if _, ok := body["status"]; !ok || typ == typeMessage || typ == typeFunctionCall || typ == typeFunctionOut {
		body["status"] = "completed"
	}
	return item{pos: p, body: body}
}

// storedItem returns the item a message was made from, or nil.
func storedItem(m *carryon.Message) map[string]any {
	if len(m.Metadata) == 0 {
		return nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m.Metadata, &meta) != nil || len(meta[itemKey]) == 0 {
		return nil
	}
	var body map[string]any
	d := json.NewDecoder(bytes.NewReader(meta[itemKey]))
	d.UseNumber()
	if d.Decode(&body) != nil || body == nil {
		return nil
	}
	if _, ok := body["type"].(string); !ok {
		return nil
	}
	return body
}
