package openaiapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// conversation is the specification's Conversation object.
type conversation struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	Metadata  json.RawMessage `json:"metadata"`
	CreatedAt int64           `json:"created_at"`
}

// conversationOf answers a session as a conversation; no metadata is {}.
func conversationOf(s *carryon.Session) conversation {
	meta := s.Metadata
	if len(meta) == 0 || string(meta) == "null" {
		meta = json.RawMessage(`{}`)
	}
	return conversation{ID: s.ID, Object: "conversation", Metadata: meta, CreatedAt: s.CreatedAt.Unix()}
}

// itemList is the specification's ConversationItemList.
type itemList struct {
	Object  string  `json:"object"`
	Data    []item  `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

func listOf(items []item, more bool) itemList {
	l := itemList{Object: "list", Data: items, HasMore: more}
	if l.Data == nil {
		l.Data = []item{}
	}
	if len(items) > 0 {
		first, last := items[0].id(), items[len(items)-1].id()
		l.FirstID, l.LastID = &first, &last
	}
	return l
}

// writeOptions reads the write controls of a request: Idempotency-Key and If-Match.
func writeOptions(r *http.Request, versioned bool) (carryon.WriteOptions, error) {
	o := carryon.WriteOptions{RequestID: r.Header.Get("Idempotency-Key")}
	v, star, err := wire.IfMatch(r.Header.Get("If-Match"))
	if star || v == nil && err == nil {
		return o, nil
	}
	if !versioned {
		return o, carryon.Errorf(carryon.EINVALID, "If-Match has nothing to match here: this write makes a new conversation")
	}
	if err != nil || *v < 1 {
		return o, carryon.Errorf(carryon.EINVALID, "If-Match must be a conversation version such as \"3\", not %q", strings.TrimSpace(r.Header.Get("If-Match")))
	}
	o.ExpectedVersion = v
	return o, nil
}

// answer writes v with the session's version as its ETag.
func answer(w http.ResponseWriter, version int64, v any) {
	if version > 0 {
		w.Header().Set("ETag", wire.ETag(version))
	}
	writeJSON(w, http.StatusOK, v)
}

// createRequest is the body of POST /v1/conversations.
type createRequest struct {
	Metadata json.RawMessage   `json:"metadata"`
	Items    []json.RawMessage `json:"items"`
}

// createConversation makes a session with the items as its first messages, in one write under
// the Idempotency-Key: a crash stores both or neither, items an append refuses leave no
// conversation behind, and a retry repeats nothing.
func (h *Handler) createConversation(w http.ResponseWriter, r *http.Request) {
	var in createRequest
	if err := decodeBody(r, &in, true); err != nil {
		WriteError(w, r, err)
		return
	}
	meta, err := metadataOf(in.Metadata)
	if err == nil {
		var msgs []carryon.NewMessage
		if msgs, err = messagesOf(in.Items, "items"); err == nil {
			var opt carryon.WriteOptions
			if opt, err = writeOptions(r, false); err == nil {
				var s *carryon.Session
				if s, err = h.create(r, meta, msgs, opt.RequestID); err == nil {
					answer(w, s.Version, conversationOf(s))
					return
				}
			}
		}
	}
	WriteError(w, r, err)
}

func (h *Handler) create(r *http.Request, meta json.RawMessage, msgs []carryon.NewMessage, key string) (*carryon.Session, error) {
	return h.sessions.Create(r.Context(), carryon.NewSession{Metadata: meta, Messages: msgs, WriteOptions: carryon.WriteOptions{RequestID: key}})
}

func (h *Handler) getConversation(w http.ResponseWriter, r *http.Request) {
	v, err := h.sessions.Get(r.Context(), r.PathValue("conversation_id"), carryon.GetOptions{Messages: -1})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	answer(w, v.Version, conversationOf(&v.Session))
}

// updateRequest is the body of POST /v1/conversations/{id}.
type updateRequest struct {
	Metadata json.RawMessage `json:"metadata"`
}

// updateConversation replaces the metadata; a null metadata clears it.
func (h *Handler) updateConversation(w http.ResponseWriter, r *http.Request) {
	var in updateRequest
	err := decodeBody(r, &in, false)
	var meta json.RawMessage
	if err == nil {
		meta, err = metadataOf(in.Metadata)
	}
	var opt carryon.WriteOptions
	if err == nil {
		opt, err = writeOptions(r, true)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if meta == nil {
		meta = json.RawMessage(`{}`)
	}
	s, err := h.sessions.Update(r.Context(), r.PathValue("conversation_id"), carryon.SessionUpdate{Metadata: meta, WriteOptions: opt})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	answer(w, s.Version, conversationOf(s))
}

func (h *Handler) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("conversation_id")
	opt, err := writeOptions(r, true)
	if err == nil {
		err = h.sessions.Delete(r.Context(), id, opt)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "conversation.deleted", "deleted": true})
}

// itemsRequest is the body of POST /v1/conversations/{id}/items.
type itemsRequest struct {
	Items []json.RawMessage `json:"items"`
}

func (h *Handler) createItems(w http.ResponseWriter, r *http.Request) {
	var in itemsRequest
	err := decodeBody(r, &in, false)
	var msgs []carryon.NewMessage
	if err == nil {
		if len(in.Items) == 0 {
			err = invalidParam("items", "items must hold 1 to %d items", maxItems)
		} else {
			msgs, err = messagesOf(in.Items, "items")
		}
	}
	var opt carryon.WriteOptions
	if err == nil {
		opt, err = writeOptions(r, true)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	res, err := h.sessions.AppendMessages(r.Context(), r.PathValue("conversation_id"), carryon.AppendInput{Messages: msgs, WriteOptions: opt})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var out []item
	for _, m := range res.Messages {
		out = append(out, itemsOf(m)...)
	}
	answer(w, res.Version, listOf(out, false))
}

// itemAt returns the items of the message at seq of the conversation, or ENOTFOUND for an
// item that is not there (the error names the item id).
func (h *Handler) itemsAt(r *http.Request, seq int64) ([]item, error) {
	page, err := h.sessions.ListMessages(r.Context(), r.PathValue("conversation_id"), carryon.MessageFilter{AfterSeq: seq - 1, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 || page.Items[0].Seq != seq {
		return nil, nil
	}
	return itemsOf(page.Items[0]), nil
}

// findItem returns the item named by the path's item_id; ENOTFOUND when it is not one.
func (h *Handler) findItem(r *http.Request) (item, error) {
	id := r.PathValue("item_id")
	missing := carryon.Errorf(carryon.ENOTFOUND, "conversation %s has no item %s", r.PathValue("conversation_id"), id)
	p, ok := parseItemID(id)
	if !ok {
		// Still check the conversation, so another user's is a 404 about the conversation.
		if _, err := h.sessions.Get(r.Context(), r.PathValue("conversation_id"), carryon.GetOptions{Messages: -1}); err != nil {
			return item{}, err
		}
		return item{}, missing
	}
	items, err := h.itemsAt(r, p.seq)
	if err != nil {
		return item{}, err
	}
	for _, it := range items {
		if it.pos == p && it.id() == id {
			return it, nil
		}
	}
	return item{}, missing
}

func (h *Handler) getItem(w http.ResponseWriter, r *http.Request) {
	it, err := h.findItem(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

// deleteItem deletes the message the item is part of (DeleteMessage: a tombstone) and answers
// the conversation. A message read as several items (a native assistant message with text and
// tool calls) goes as a whole. A repeat of a delete with its Idempotency-Key goes to the delete
// before the item is looked up: the item is gone since the first, which the repeat answers.
func (h *Handler) deleteItem(w http.ResponseWriter, r *http.Request) {
	opt, err := writeOptions(r, true)
	var seq int64
	if err == nil {
		var used bool
		_, used, err = h.repeat(r)
		p, ok := parseItemID(r.PathValue("item_id"))
		switch {
		case err != nil:
		case used && ok:
			seq = p.seq // DeleteMessage answers the first answer, or refuses another request with the key
		default:
			var it item
			if it, err = h.findItem(r); err == nil {
				seq = it.pos.seq
			}
		}
	}
	var s *carryon.Session
	if err == nil {
		s, err = h.sessions.DeleteMessage(r.Context(), r.PathValue("conversation_id"), seq, opt)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	answer(w, s.Version, conversationOf(s))
}

// listLimit reads a list's limit parameter: 1 to 100, default 20.
func listLimit(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return 20, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 100 {
		return 0, invalidParam("limit", "limit must be an integer from 1 to 100, not %q", v)
	}
	return n, nil
}

// listItems pages through the items: limit 1 to 100 (default 20), order desc (the default) or
// asc, after an item id (the page starts right past it in that order).
func (h *Handler) listItems(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := listLimit(q)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	order := q.Get("order")
	switch order {
	case "":
		order = "desc"
	case "asc", "desc":
	default:
		WriteError(w, r, invalidParam("order", "order must be asc or desc, not %q", order))
		return
	}
	var after *itemPos
	if v := q.Get("after"); v != "" {
		p, ok := parseItemID(v)
		if !ok {
			WriteError(w, r, invalidParam("after", "after must be an item id of this conversation, not %q", v))
			return
		}
		after = &p
	}
	v, err := h.sessions.Get(r.Context(), r.PathValue("conversation_id"), carryon.GetOptions{Messages: -1})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var items []item
	if order == "asc" {
		items, err = h.pageAsc(r, after, limit+1)
	} else {
		items, err = h.pageDesc(r, after, v.LastSeq, limit+1)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	answer(w, v.Version, listOf(items, more))
}

// pageAsc returns up to n items after position after (nil: from the start), oldest first.
func (h *Handler) pageAsc(r *http.Request, after *itemPos, n int) ([]item, error) {
	var out []item
	var from int64
	if after != nil {
		at, err := h.itemsAt(r, after.seq)
		if err != nil {
			return nil, err
		}
		for _, it := range at {
			if after.less(it.pos) {
				out = append(out, it)
			}
		}
		from = after.seq
	}
	for len(out) < n {
		page, err := h.sessions.ListMessages(r.Context(), r.PathValue("conversation_id"), carryon.MessageFilter{AfterSeq: from, Limit: n})
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			out = append(out, itemsOf(m)...)
			from = m.Seq
		}
		if page.NextCursor == "" || len(page.Items) < n { // the end, or the page's byte budget
			break
		}
	}
	return out[:min(len(out), n)], nil
}

// pageDesc returns up to n items before position after (nil: from the end, lastSeq), newest
// first.
func (h *Handler) pageDesc(r *http.Request, after *itemPos, lastSeq int64, n int) ([]item, error) {
	var out []item
	before := lastSeq + 1
	if after != nil {
		at, err := h.itemsAt(r, after.seq)
		if err != nil {
			return nil, err
		}
		for _, it := range slices.Backward(at) {
			if it.pos.less(*after) {
				out = append(out, it)
			}
		}
		before = after.seq
	}
	for len(out) < n && before > 1 {
		page, err := h.sessions.ListMessages(r.Context(), r.PathValue("conversation_id"), carryon.MessageFilter{BeforeSeq: before, Limit: n})
		if err != nil {
			return nil, err
		}
		for _, m := range slices.Backward(page.Items) {
			its := itemsOf(m)
			slices.Reverse(its)
			out = append(out, its...)
			before = m.Seq
		}
		if page.NextCursor == "" || len(page.Items) < n { // the end, or the page's byte budget
			break
		}
	}
	return out[:min(len(out), n)], nil
}
