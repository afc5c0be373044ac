package mcptool

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// inputSchema returns a tool's inputSchema as an object schema tool.NewRegistry accepts. The MCP
// specification requires "type": "object"; servers that leave it out, send null, or say
// ["object", "null"] get "object", anything else is refused.
func inputSchema(raw any) (json.RawMessage, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("the input schema is not JSON: %v", err)
	}
	if string(b) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errors.New("the input schema is not a JSON object")
	}
	switch ty := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if ty != "object" {
			return nil, fmt.Errorf(`the input schema has "type": %q, not "object"`, ty)
		}
	case []any:
		if !slices.Contains(ty, any("object")) {
			return nil, fmt.Errorf(`the input schema's types %v do not include "object"`, ty)
		}
		m["type"] = "object"
	default:
		return nil, fmt.Errorf(`the input schema's "type" is %v, not "object"`, ty)
	}
	return json.Marshal(m)
}
