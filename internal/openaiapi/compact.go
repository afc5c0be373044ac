package openaiapi

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// CompactFunc stores a compaction of a session (the hub's sessions compaction, its summary by the
// session's model).
type CompactFunc func(ctx context.Context, sessionID string, in carryon.CompactInput) (*carryon.Compaction, error)

// compactRequest is the body of POST /v1/responses/compact (the SDK's ResponseCompactParams).
type compactRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Conversation       json.RawMessage `json:"conversation"`
	// Accepted and ignored: carryon's compaction uses no prompt cache or service tier.
	PromptCacheKey       json.RawMessage `json:"prompt_cache_key"`
	PromptCacheOptions   json.RawMessage `json:"prompt_cache_options"`
	PromptCacheRetention json.RawMessage `json:"prompt_cache_retention"`
	ServiceTier          json.RawMessage `json:"service_tier"`
}

// compactionPrefix starts a compaction item's encrypted_content: its version.
const compactionPrefix = "cmp1."

// compactRef is what a compaction item's encrypted_content names: the stored compaction (the
// session's summary message at Seq) and its owner. It is signed, not encrypted: the summary
// itself stays on the server.
type compactRef struct {
	Owner   string `json:"o"`
	Session string `json:"s"`
	Seq     int64  `json:"q"`
}

// sign returns the encrypted_content of ref: the prefix, the reference and its HMAC-SHA256 under
// the server's key.
func (h *Handler) sign(ref compactRef) string {
	payload, _ := json.Marshal(ref)
	mac := hmac.New(sha256.New, h.compactKey)
	mac.Write(payload)
	enc := base64.RawURLEncoding
	return compactionPrefix + enc.EncodeToString(payload) + "." + enc.EncodeToString(mac.Sum(nil))
}

// verify reads an encrypted_content this server signed for the caller. An item signed by
// another server (another key), altered, or made for another user is refused, never trusted.
func (h *Handler) verify(ctx context.Context, content, param string) (compactRef, error) {
	var ref compactRef
	bad := invalidParam(param, "the compaction item is not one this server made for you: send the output of this server's /v1/responses/compact as it came")
	rest, ok := strings.CutPrefix(content, compactionPrefix)
	p, s, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return ref, bad
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	sum, err2 := enc.DecodeString(s)
	if err1 != nil || err2 != nil {
		return ref, bad
	}
	mac := hmac.New(sha256.New, h.compactKey)
	mac.Write(payload)
	if !hmac.Equal(sum, mac.Sum(nil)) || json.Unmarshal(payload, &ref) != nil || ref.Owner != carryon.UserIDFromContext(ctx) {
		return ref, bad
	}
	return ref, nil
}

// compactResponse compacts a conversation: the previous response's (forked there when a later
// response followed it), the conversation's, or a new one holding input. input given with a
// previous response or a conversation is appended to it first. The answer is OpenAI's compacted
// response: the user messages the compaction covers, then one compaction item whose
// encrypted_content is a signed reference to carryon's stored compaction.
func (h *Handler) compactResponse(w http.ResponseWriter, r *http.Request) {
	if h.compact == nil {
		WriteError(w, r, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server has no summarizer: compaction is not served"))
		return
	}
	var in compactRequest
	if err := decodeBody(r, &in, false); err != nil {
		WriteError(w, r, err)
		return
	}
	conv, err := conversationID(in.Conversation)
	if err == nil && conv != "" && in.PreviousResponseID != "" {
		err = invalidParam("previous_response_id", "previous_response_id and conversation cannot both be given: a compaction compacts one or the other")
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	var msgs []carryon.NewMessage
	if t := bytes.TrimSpace(in.Input); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if msgs, _, _, err = inputOf(in.Input); err != nil {
			WriteError(w, r, err)
			return
		}
	}
	ctx := r.Context()
	key := r.Header.Get("Idempotency-Key")
	sub := func(suffix string) string {
		if key == "" {
			return ""
		}
		return key + "#" + suffix
	}
	sessionID := conv
	switch {
	case in.PreviousResponseID != "":
		sessionID, err = h.continueAt(r, in.PreviousResponseID, sub("fork"))
	case conv == "" && len(msgs) == 0:
		err = invalidParam("input", "give input, previous_response_id or conversation: the history to compact")
	case conv == "":
		var s *carryon.Session
		s, err = h.sessions.Create(ctx, carryon.NewSession{Title: titleOf(msgs), TitleDerived: true, Messages: msgs, WriteOptions: carryon.WriteOptions{RequestID: sub("session")}})
		if s != nil {
			sessionID, msgs = s.ID, nil
		}
	}
	if err == nil && len(msgs) > 0 {
		_, err = h.sessions.AppendMessages(ctx, sessionID, carryon.AppendInput{Messages: msgs, WriteOptions: carryon.WriteOptions{RequestID: sub("input")}})
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	c, err := h.compact(ctx, sessionID, carryon.CompactInput{Instructions: in.Instructions, WriteOptions: carryon.WriteOptions{RequestID: key}})
	if err != nil {
		WriteError(w, r, err)
		return
	}
	output, err := h.coveredUserItems(ctx, sessionID, c.CoversTo)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	cmp := h.compactionItem(carryon.UserIDFromContext(ctx), sessionID, c.Seq)
	id := cmp["id"]
	output = append(output, cmp)
	out := (len(c.Summary) + 3) / 4 // the summary the model wrote, estimated
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "response.compaction", "created_at": c.CreatedAt.Unix(), "output": output,
		"usage": map[string]any{"input_tokens": c.TokensBefore, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": c.TokensBefore + out},
	})
}

// compactionItem is the compaction item of the compaction stored at seq of the owner's session:
// its id (cmp_<session>_<seq>) and its encrypted_content, the signed reference to it.
func (h *Handler) compactionItem(owner, sessionID string, seq int64) map[string]any {
	id := "cmp_" + strings.TrimPrefix(sessionID, carryon.SessionIDPrefix) + "_" + strconv.FormatInt(seq, 10)
	return map[string]any{"type": "compaction", "id": id, "encrypted_content": h.sign(compactRef{Owner: owner, Session: sessionID, Seq: seq})}
}

// coveredUserItems returns the user messages of the session up to seq upTo, as message items.
func (h *Handler) coveredUserItems(ctx context.Context, sessionID string, upTo int64) ([]any, error) {
	out := []any{}
	cursor := ""
	for {
		page, err := h.sessions.ListMessages(ctx, sessionID, carryon.MessageFilter{Cursor: cursor, Limit: 200})
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			if m.Seq > upTo {
				return out, nil
			}
			if m.Role == carryon.RoleUser && m.Kind != carryon.KindSummary {
				it := messageItem("user", m.Content)
				it["id"] = fmt.Sprintf("msg_%s_%d", strings.TrimPrefix(sessionID, carryon.SessionIDPrefix), m.Seq)
				it["status"] = "completed"
				out = append(out, it)
			}
		}
		if page.NextCursor == "" {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// compactedInput reads a create request's input for compaction items: when it holds one, the
// request continues the compaction's conversation with the items after the last one (those
// before it are what it covers, already stored). It returns the conversation ("" for none) and
// the input to go on with.
func (h *Handler) compactedInput(r *http.Request, raw json.RawMessage) (string, json.RawMessage, error) {
	ctx := r.Context()
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return "", raw, nil
	}
	last, content := -1, ""
	for i, it := range items {
		var head struct {
			Type             string `json:"type"`
			EncryptedContent string `json:"encrypted_content"`
		}
		if json.Unmarshal(it, &head) == nil && head.Type == "compaction" {
			last, content = i, head.EncryptedContent
		}
	}
	if last < 0 {
		return "", raw, nil
	}
	ref, err := h.verify(ctx, content, fmt.Sprintf("input[%d].encrypted_content", last))
	if err != nil {
		return "", nil, err
	}
	// The items after the compaction item that the conversation holds already after the
	// compaction, in the same order (a stateless client sends back what it sent and was answered
	// since: the output of a response that compacted on its own, context_management, or the turns
	// after a /v1/responses/compact), are skipped too: they are stored.
	// A repeat (its Idempotency-Key used) is the first request again, whose input is stored now:
	// nothing is skipped, and the repeat answers the first response.
	_, repeated, err := h.repeat(r)
	if err != nil {
		return "", nil, err
	}
	var stored []string
	if !repeated {
		if stored, err = h.storedAfter(ctx, ref.Session, ref.Seq, len(items)-last-1); err != nil {
			return "", nil, err
		}
	}
	next := last + 1
match:
	for _, k := range stored {
		switch {
		case next < len(items) && keyOfRaw(items[next]) == k:
			next++
		case isCallKey(k):
			// A call of a tool of carryon's own, or its output: stored with the turn, never an
			// output item, so a client that sends back what it was answered does not have it.
		default:
			break match
		}
	}
	rest, _ := json.Marshal(items[next:])
	return ref.Session, rest, nil
}

// storedAfter returns the keys (repeatKey) of the items of the session's messages after seq,
// pages of them until it has n that are no function calls or outputs (or there are no more).
func (h *Handler) storedAfter(ctx context.Context, sessionID string, seq int64, n int) ([]string, error) {
	var keys []string
	after := seq
	for seen := 0; seen < n; {
		page, err := h.sessions.ListMessages(ctx, sessionID, carryon.MessageFilter{AfterSeq: after, Limit: 200})
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			for _, it := range itemsOf(m) {
				k := repeatKey(it.body)
				keys = append(keys, k)
				if !isCallKey(k) {
					seen++
				}
			}
			after = m.Seq
		}
		if page.NextCursor == "" {
			break
		}
	}
	return keys, nil
}

// isCallKey says whether k is the repeatKey of a function call or of its output.
func isCallKey(k string) bool {
	return strings.HasPrefix(k, typeFunctionCall+"\x00") || strings.HasPrefix(k, typeFunctionOut+"\x00")
}

// keyOfRaw is the repeatKey of an input item.
func keyOfRaw(raw json.RawMessage) string {
	var body map[string]any
	if json.Unmarshal(raw, &body) != nil {
		return ""
	}
	return repeatKey(body)
}

// repeatKey is what tells an item from another when an input repeats stored ones: its type, and
// its role and text (a message), its call id (a function call or its output) or its output.
func repeatKey(body map[string]any) string {
	typ, _ := body["type"].(string)
	role, _ := body["role"].(string)
	if typ == "" && role != "" {
		typ = typeMessage
	}
	switch typ {
	case typeMessage:
		text := ""
		switch c := body["content"].(type) {
		case string:
			text = c
		case []any:
			for _, p := range c {
				if part, ok := p.(map[string]any); ok {
					t, _ := part["text"].(string)
					text += t
				}
			}
		}
		return typ + "\x00" + role + "\x00" + text
	case typeFunctionCall:
		id, _ := body["call_id"].(string)
		return typ + "\x00" + id
	case typeFunctionOut:
		id, _ := body["call_id"].(string)
		out, _ := json.Marshal(body["output"])
		return typ + "\x00" + id + "\x00" + string(out)
	}
	return typ
}

// newCompactKey is the key of a server that was given none: compaction items it signs are
// refused after it restarts.
func newCompactKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}
