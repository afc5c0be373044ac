package sqlq

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// A delete redacts every copy of the message's text that carryon made, in the delete's own
// transaction (redact below): the tombstone and the redactions commit together or not at all.
//
//   - The message row is erased (content, tool calls and metadata emptied; role, kind, seq,
//     sizes and version stay for the tombstone) once no session sees it: neither the session that
//     stored it nor a fork of it that shares the seq and has no tombstone of its own for it. While
//     a fork made before the delete still sees it, the row keeps the text for that fork; it is
//     erased when the last session that sees it deletes it, or when a session that is deleted
//     hands its rows to forks that had deleted them (materialise).
//   - The session's runs: a run whose trigger message it is shows an empty message, a run whose
//     reply it is an empty reply.
//   - Their events (their seqs stay, so resumed streams are unchanged): the copy of the message in
//     a message.appended event becomes a tombstone ({"content": "", "deleted": true}, no tool
//     calls), the model.delta events that streamed it carry an empty text, and any other string
//     of the run's events equal to its text is emptied.
//   - A title derived from it (Session.TitleDerived) is cleared.
//   - The session's request ids keep their status and ids, but their stored answers no longer
//     hold the text (nor the derived title): each string equal to one is emptied.
//   - A summary that covers it is deleted too (and so redacted), so the next context build
//     summarises again without it.
//
// What the agent did with the text (its working memory, its tool calls and their results) is the
// agent's own state, not a copy: it stays, as long-term memory does.

// redact removes the copies of m, the message seq of s whose tombstone was just stored, and
// returns the summaries of s that cover it (which the caller deletes as well).
func (t *Tx) redact(ctx context.Context, owner string, s *carryon.Session, m *carryon.Message) ([]int64, error) {
	head, err := t.ownLink(ctx, owner, s.ID, "")
	if err != nil {
		return nil, err
	}
	segs, err := store.ForkSegments(head, m.Seq-1, t.parentOf(ctx))
	if err != nil {
		return nil, err
	}
	for _, sg := range segs {
		if sg.Lo < m.Seq && m.Seq <= sg.Hi {
			if err := t.eraseUnseen(ctx, sg.Key, m.Seq); err != nil {
				return nil, err
			}
			break
		}
	}
	if err := t.redactRuns(ctx, s, m); err != nil {
		return nil, err
	}
	texts := []string{m.Content}
	if s.TitleDerived && s.Title != "" && m.Content != "" && strings.HasPrefix(m.Content, strings.TrimSuffix(s.Title, "…")) {
		texts = append(texts, s.Title)
		s.Title, s.TitleDerived = "", false // stored by the caller's Touch
	}
	if err := t.redactRequestIDs(ctx, owner, s.ID, texts); err != nil {
		return nil, err
	}
	var summaries []int64
	for _, sg := range segs {
		got, err := scanAll(t, ctx, "find summaries", func(r Row) (int64, error) {
			var seq int64
			err := r.Scan(&seq)
			return seq, err
		}, `SELECT m.seq FROM messages m WHERE m.session_key = ? AND m.seq > ? AND m.seq <= ? AND m.kind = ?
			AND m.covers_from <= ? AND m.covers_to >= ?`+visibleTo, sg.Key, max(sg.Lo, m.Seq), sg.Hi,
			string(carryon.KindSummary), m.Seq, m.Seq, s.ID)
		if err != nil {
			return nil, err
		}
		summaries = append(summaries, got...)
	}
	return summaries, nil
}

// eraseUnseen erases the text of the row seq of the session whose key is key when no session
// sees it any more: that session and each fork that reads through it up to seq (fork seqs of
// seq or more all the way down) have a tombstone for it.
func (t *Tx) eraseUnseen(ctx context.Context, key, seq int64) error {
	seen, err := t.seen(ctx, key, seq, "")
	if err != nil || seen {
		return err
	}
	_, err = t.Conn.Exec(ctx, `UPDATE messages SET content = '', tool_calls = NULL, metadata = NULL
		WHERE session_key = ? AND seq = ?`, key, seq)
	return t.Wrap(err, "erase message")
}

// seen says whether a session other than except sees the row seq of the session whose key is
// key: that session or a fork that reads through it up to seq without a tombstone for it. A row
// is erased exactly when none does (eraseUnseen), and only a new fork could see it again.
func (t *Tx) seen(ctx context.Context, key, seq int64, except string) (bool, error) {
	return t.exists(ctx, "find who sees a message", `WITH RECURSIVE seers (id) AS (
			SELECT id FROM sessions WHERE session_key = ?
			UNION ALL
			SELECT s.id FROM sessions s JOIN seers ON s.parent_id = seers.id WHERE s.fork_seq >= ?)
		SELECT 1 FROM seers WHERE seers.id <> ?
			AND NOT EXISTS (SELECT 1 FROM message_deletions d WHERE d.session_id = seers.id AND d.seq = ?) LIMIT 1`,
		key, seq, except, seq)
}

// redactRuns empties the copies of m in the runs of s and in their events: the runs it triggered,
// the run that wrote it and the runs whose reply it is.
func (t *Tx) redactRuns(ctx context.Context, s *carryon.Session, m *carryon.Message) error {
	ids, err := scanAll(t, ctx, "find runs of a message", func(r Row) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	}, `SELECT id FROM runs WHERE session_id = ? AND (trigger_seq = ? OR id = ? OR (reply = ? AND reply <> ''))`,
		s.ID, m.Seq, m.RunID, m.Content)
	if err != nil || len(ids) == 0 {
		return err
	}
	if _, err := t.Conn.Exec(ctx, `UPDATE runs SET message = '' WHERE session_id = ? AND trigger_seq = ?`, s.ID, m.Seq); err != nil {
		return t.Wrap(err, "redact runs")
	}
	if m.Content != "" {
		if _, err := t.Conn.Exec(ctx, `UPDATE runs SET reply = '' WHERE session_id = ? AND reply = ?`, s.ID, m.Content); err != nil {
			return t.Wrap(err, "redact runs")
		}
	}
	for _, id := range ids {
		if err := t.redactEvents(ctx, s.ID, id, m); err != nil {
			return err
		}
	}
	return nil
}

// redactEvents rewrites the events of run id that copy m (see redact).
func (t *Tx) redactEvents(ctx context.Context, sessionID, id string, m *carryon.Message) error {
	type row struct {
		seq  int64
		typ  string
		data *string
	}
	events, err := scanAll(t, ctx, "read events to redact", func(r Row) (row, error) {
		var e row
		err := r.Scan(&e.seq, &e.typ, &e.data)
		return e, err
	}, `SELECT seq, type, data FROM run_events WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return err
	}
	vals := make([]any, len(events))
	dirty := make([]bool, len(events))
	var deltas []int // the model.delta events since the last message.appended
	for i, e := range events {
		if e.data == nil {
			continue
		}
		d := json.NewDecoder(strings.NewReader(*e.data))
		d.UseNumber()
		if d.Decode(&vals[i]) != nil {
			vals[i] = nil
			continue
		}
		dirty[i] = blankStrings(&vals[i], []string{m.Content})
		switch carryon.EventType(e.typ) {
		case carryon.EventModelDelta:
			deltas = append(deltas, i)
		case carryon.EventMessageAppended:
			if tombstoneCopy(vals[i], sessionID, m.Seq) {
				dirty[i] = true
				for _, j := range deltas {
					if o, ok := vals[j].(map[string]any); ok && m.Role == carryon.RoleAssistant && o["text"] != "" {
						o["text"], dirty[j] = "", true
					}
				}
			}
			deltas = nil
		}
	}
	for i, v := range vals {
		if !dirty[i] {
			continue
		}
		b, err := encodeJSON(v)
		if err != nil {
			return t.Wrap(err, "redact events")
		}
		if _, err := t.Conn.Exec(ctx, `UPDATE run_events SET data = ? WHERE run_id = ? AND seq = ?`, string(b), id, events[i].seq); err != nil {
			return t.Wrap(err, "redact events")
		}
	}
	return nil
}

// tombstoneCopy turns the copies of message seq of session sessionID in the payload of a
// message.appended event (an AppendResult) into tombstones, and says whether it found one.
func tombstoneCopy(v any, sessionID string, seq int64) bool {
	o, ok := v.(map[string]any)
	if !ok {
		return false
	}
	msgs, _ := o["messages"].([]any)
	found := false
	for _, x := range msgs {
		mo, ok := x.(map[string]any)
		if !ok {
			continue
		}
		n, _ := mo["seq"].(json.Number)
		if got, err := n.Int64(); err != nil || got != seq {
			continue
		}
		if sid, _ := mo["session_id"].(string); sid != "" && sid != sessionID {
			continue
		}
		mo["content"], mo["deleted"] = "", true
		delete(mo, "tool_calls")
		delete(mo, "metadata")
		found = true
	}
	return found
}

// blankStrings empties every string in *v (a decoded JSON value) equal to one of texts (the
// empty text excepted) and says whether it changed one.
func blankStrings(v *any, texts []string) bool {
	switch x := (*v).(type) {
	case string:
		for _, t := range texts {
			if t != "" && x == t {
				*v = ""
				return true
			}
		}
	case map[string]any:
		changed := false
		for k, e := range x {
			if blankStrings(&e, texts) {
				x[k], changed = e, true
			}
		}
		return changed
	case []any:
		changed := false
		for i := range x {
			if blankStrings(&x[i], texts) {
				changed = true
			}
		}
		return changed
	}
	return false
}

// encodeJSON writes v as JSON without escaping <, > and & (as stored payloads are).
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// redactRequestIDs empties the strings equal to one of texts in the stored answers of the
// owner's request ids of session sessionID (an answer stored as a reference reads the session
// again when it is repeated, so holds no copy). Status, ids and fingerprints stay.
func (t *Tx) redactRequestIDs(ctx context.Context, owner, sessionID string, texts []string) error {
	type rec struct {
		key    string
		result []byte
	}
	recs, err := scanAll(t, ctx, "read request ids to redact", func(r Row) (rec, error) {
		var x rec
		err := r.Scan(&x.key, &x.result)
		return x, err
	}, `SELECT key, result FROM idempotency WHERE owner_id = ? AND session_id = ? AND result IS NOT NULL`, owner, sessionID)
	if err != nil {
		return err
	}
	for _, x := range recs {
		b, err := expandResult(x.result)
		if err != nil || len(b) == 0 || (b[0] != '{' && b[0] != '[') {
			continue // not JSON: a reference, or unreadable (then not served either)
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&v) != nil || !blankStrings(&v, texts) {
			continue
		}
		if b, err = encodeJSON(v); err != nil {
			return t.Wrap(err, "redact request ids")
		}
		if _, err := t.Conn.Exec(ctx, `UPDATE idempotency SET result = ? WHERE owner_id = ? AND key = ?`,
			compactResult(b), owner, x.key); err != nil {
			return t.Wrap(err, "redact request ids")
		}
	}
	return nil
}
