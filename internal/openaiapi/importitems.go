package openaiapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/carryon-hub/carryon"
)

// ImportItems maps the JSON that GET /v1/conversations/{id}/items answers to the messages a
// session stores, the way items become messages here (messageOf): one list page, several
// concatenated, or an array of pages, their items newest first when order is "desc" (OpenAI's
// default) or "" and oldest first when "asc". It returns the messages oldest first; EINVALID for
// anything else.
func ImportItems(raw []byte, order string) ([]carryon.NewMessage, error) {
	if order != "" && order != "asc" && order != "desc" {
		return nil, carryon.Errorf(carryon.EINVALID, "order must be asc or desc, not %q", order)
	}
	type page struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		FirstID string            `json:"first_id"`
		LastID  string            `json:"last_id"`
		HasMore bool              `json:"has_more"`
	}
	var pages []page
	d := json.NewDecoder(bytes.NewReader(raw))
	for n := 1; ; n++ {
		var v json.RawMessage
		if err := d.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "the items are not JSON: value %d: %v", n, err)
		}
		one := []json.RawMessage{v}
		if bytes.HasPrefix(bytes.TrimSpace(v), []byte("[")) {
			if err := json.Unmarshal(v, &one); err != nil {
				return nil, carryon.Errorf(carryon.EINVALID, "value %d is no array of list pages: %v", n, err)
			}
		}
		for _, pv := range one {
			var p page
			if err := json.Unmarshal(pv, &p); err != nil || p.Object != "list" {
				return nil, carryon.Errorf(carryon.EINVALID, "page %d is no list object {\"object\":\"list\",\"data\":[…]} of GET /v1/conversations/{id}/items", len(pages)+1)
			}
			pages = append(pages, p)
		}
	}
	var items []json.RawMessage
	for _, p := range pages {
		items = append(items, p.Data...)
	}
	if order != "asc" {
		slices.Reverse(items)
	}
	out := make([]carryon.NewMessage, 0, len(items))
	for i, it := range items {
		m, err := messageOf(it, fmt.Sprintf("items[%d]", i))
		if err != nil {
			if ce, ok := carryon.AsError(err); ok {
				return nil, ce
			}
			return nil, carryon.Errorf(carryon.EINVALID, "%v", err)
		}
		out = append(out, m)
	}
	return out, nil
}
