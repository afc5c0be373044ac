package sessions

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/store"
)

// maxContentBytes bounds one message's content.
const maxContentBytes = 1 << 20

// AppendMessages appends messages to a session in one write: they get consecutive seqs and the
// session's next version.
func (s *Service) AppendMessages(ctx context.Context, id string, in carryon.AppendInput) (*carryon.AppendResult, error) {
	key := in.RequestID
	in.RequestID = ""
	return Write(ctx, s, "messages.append", id, key, in, func(tx store.Tx, own string, now time.Time) (*carryon.AppendResult, error) {
		sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, in.Fence, now)
		if err != nil {
			return nil, err
		}
		return AppendInTx(ctx, tx, sess, in.Messages, fenceRun(in.Fence), key, now)
	})
}

// AppendInTx validates messages and appends them to a session loaded with LoadWritable in the same
// transaction, linked to runID and requestID, and moves the session to its next version. Other
// hub services (runs) use it to append as part of a larger write.
func AppendInTx(ctx context.Context, tx store.Tx, sess *carryon.Session, in []carryon.NewMessage, runID, requestID string, now time.Time) (*carryon.AppendResult, error) {
	if err := validMessages(in); err != nil {
		return nil, err
	}
	for i, m := range in {
		if m.Kind == carryon.KindSummary && m.CoversTo > sess.LastSeq {
			return nil, carryon.Errorf(carryon.EINVALID, "messages[%d]: covers_to %d is past the last message %d", i, m.CoversTo, sess.LastSeq)
		}
	}
	msgs := make([]*carryon.Message, len(in))
	for i, m := range in {
		kind := m.Kind
		if kind == "" {
			kind = carryon.KindMessage
		}
		msgs[i] = &carryon.Message{
			SessionID: sess.ID, Seq: sess.LastSeq + int64(i) + 1, Role: m.Role, Kind: kind,
			Content: m.Content, Name: m.Name, ToolCalls: compactJSON(m.ToolCalls), ToolCallID: m.ToolCallID,
			CoversFrom: m.CoversFrom, CoversTo: m.CoversTo, RunID: runID, RequestID: requestID,
			Tokens: estimateTokens(m), Metadata: compactJSON(m.Metadata),
			Version: sess.Version + 1, CreatedAt: now,
		}
	}
	sess.LastSeq += int64(len(msgs))
	sess.MessageCount += int64(len(msgs))
	if err := Touch(ctx, tx, sess, now); err != nil {
		return nil, err
	}
	if err := tx.InsertMessages(ctx, sess.OwnerID, msgs); err != nil {
		return nil, err
	}
	return &carryon.AppendResult{SessionID: sess.ID, Version: sess.Version, Messages: msgs}, nil
}

// ValidMessages checks messages as an append does, for a service that must refuse bad input
// before it writes anything.
func ValidMessages(msgs []carryon.NewMessage) error { return validMessages(msgs) }

// ListMessages pages through a session's visible messages, oldest first.
func (s *Service) ListMessages(ctx context.Context, id string, f carryon.MessageFilter) (*carryon.MessagePage, error) {
	after, err := position(f.Cursor, "after_seq", f.AfterSeq)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	page := &carryon.MessagePage{Items: []*carryon.Message{}}
	err = s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		items, err := tx.MessagesAfter(ctx, own, sess, after, limit+1)
		if err != nil {
			return err
		}
		if len(items) > limit {
			items = items[:limit]
			page.NextCursor = strconv.FormatInt(items[limit-1].Seq, 10)
		}
		page.Items = items
		return nil
	})
	return page, err
}

func validMessages(msgs []carryon.NewMessage) error {
	if len(msgs) == 0 {
		return carryon.Errorf(carryon.EINVALID, "messages must hold at least one message")
	}
	if len(msgs) > carryon.MaxAppendMessages {
		return carryon.Errorf(carryon.EINVALID, "messages holds %d messages; the limit is %d per request", len(msgs), carryon.MaxAppendMessages)
	}
	for i, m := range msgs {
		if !m.Role.Valid() {
			return carryon.Errorf(carryon.EINVALID, "messages[%d].role must be system, user, assistant or tool, not %q", i, m.Role)
		}
		if m.Kind != "" && m.Kind != carryon.KindMessage && m.Kind != carryon.KindSummary {
			return carryon.Errorf(carryon.EINVALID, "messages[%d].kind must be message or summary, not %q", i, m.Kind)
		}
		if !utf8.ValidString(m.Content) || !utf8.ValidString(m.Name) || !utf8.ValidString(m.ToolCallID) {
			return carryon.Errorf(carryon.EINVALID, "messages[%d] is not valid UTF-8", i)
		}
		if len(m.Content) > maxContentBytes {
			return carryon.Errorf(carryon.EINVALID, "messages[%d].content is %d bytes; the limit is %d", i, len(m.Content), maxContentBytes)
		}
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return carryon.Errorf(carryon.EINVALID, "messages[%d].content is empty", i)
		}
		if len(m.ToolCalls) > 0 {
			var calls []json.RawMessage
			if json.Unmarshal(m.ToolCalls, &calls) != nil {
				return carryon.Errorf(carryon.EINVALID, "messages[%d].tool_calls must be a JSON array", i)
			}
		}
		if m.Metadata != nil {
			var obj map[string]any
			if json.Unmarshal(m.Metadata, &obj) != nil || obj == nil {
				return carryon.Errorf(carryon.EINVALID, "messages[%d].metadata must be a JSON object", i)
			}
		}
		if m.Kind == carryon.KindSummary && (m.CoversFrom < 1 || m.CoversTo < m.CoversFrom) {
			return carryon.Errorf(carryon.EINVALID, "messages[%d]: a summary needs 1 <= covers_from <= covers_to", i)
		}
		if m.Kind != carryon.KindSummary && (m.CoversFrom != 0 || m.CoversTo != 0) {
			return carryon.Errorf(carryon.EINVALID, "messages[%d]: covers_from and covers_to are for summaries only", i)
		}
	}
	return nil
}

// estimateTokens is a cheap estimate (about four bytes a token) stored with each message; the
// context builder counts exactly with the model's tokenizer.
func estimateTokens(m carryon.NewMessage) int {
	return (len(m.Content)+len(m.ToolCalls)+3)/4 + 4
}
