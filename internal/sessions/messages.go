package sessions

import (
	"bytes"
	"context"
	"strconv"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/failpoint"
	"github.com/carryon-hub/carryon/internal/store"
)

// maxContentBytes bounds one message's content.
const maxContentBytes = 1 << 20

// AppendMessages appends messages to a session in one write: they get consecutive seqs and the
// session's next version.
//
// Messages a client appends (without a run's fence) are held to the rules of a conversation a
// model API accepts, so that a stored message can never make every later run fail: every tool
// call has an id, a name and arguments that are a JSON object; a tool message answers, by
// tool_call_id, a tool call earlier in the same append or among the session's last
// carryon.MaxMessageWindow messages.
//
// With WorkingMemoryPatch, the patch is applied to the working memory in the same transaction,
// under the same version and request id: the messages and the memory change are stored together
// or not at all.
func (s *Service) AppendMessages(ctx context.Context, id string, in carryon.AppendInput) (*carryon.AppendResult, error) {
	var pending map[string]int // tool_call_id → index of the tool message that must find its call
	if in.Fence == nil {
		var err error
		if pending, err = validClientMessages(in.Messages); err != nil {
			return nil, err
		}
	}
	var patch map[string]any
	if p := bytes.TrimSpace(in.WorkingMemoryPatch); len(p) == 0 || bytes.Equal(p, []byte("null")) {
		in.WorkingMemoryPatch = nil // absent or null: no patch
	} else {
		var err error
		if patch, err = decodePatch(in.WorkingMemoryPatch); err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "working_memory_patch: %s", carryon.ErrorMessage(err))
		}
		in.WorkingMemoryPatch = mustJSON(patch)
	}
	key := in.RequestID
	in.RequestID = ""
	return write(ctx, s, "messages.append", id, key, in, appendRef, func(tx store.Tx, own string, now time.Time) (*carryon.AppendResult, error) {
		sess, err := LoadWritable(ctx, tx, own, id, in.ExpectedVersion, in.Fence, now)
		if err != nil {
			return nil, err
		}
		if err := findCalls(ctx, tx, sess, in.Messages, pending); err != nil {
			return nil, err
		}
		var wm *carryon.WorkingMemoryState
		if patch != nil {
			// Before the append, which moves the session to the version the revision names.
			if wm, _, err = patchInTx(ctx, tx, sess, patch, fenceRun(in.Fence), now); err != nil {
				return nil, err
			}
			failpoint.Hit(failpoint.AppendPatched)
		}
		res, err := AppendInTx(ctx, tx, sess, in.Messages, fenceRun(in.Fence), key, now)
		if err != nil {
			return nil, err
		}
		if wm != nil {
			wm.Version = res.Version
			res.WorkingMemory = wm
		}
		return res, nil
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

// ListMessages pages through a session's visible messages, oldest first (backwards with
// BeforeSeq).
func (s *Service) ListMessages(ctx context.Context, id string, f carryon.MessageFilter) (*carryon.MessagePage, error) {
	after, err := position(f.Cursor, "after_seq", f.AfterSeq)
	if err != nil {
		return nil, err
	}
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	switch {
	case f.BeforeSeq < 0:
		return nil, carryon.Errorf(carryon.EINVALID, "before_seq must not be negative")
	case f.BeforeSeq > 0 && after > 0:
		return nil, carryon.Errorf(carryon.EINVALID, "before_seq pages backwards; send it without cursor or after_seq")
	}
	page := &carryon.MessagePage{Items: []*carryon.Message{}}
	err = s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		sess, err := tx.GetSession(ctx, own, id)
		if err != nil {
			return err
		}
		// The page stops early at the read budget, before the message that would go past it;
		// next_cursor then goes on from the last message it holds.
		bctx, budget := store.WithReadBudget(ctx, s.cfg.MaxReadBytes)
		if f.BeforeSeq > 0 {
			items, err := tx.MessagesBefore(bctx, own, sess, f.BeforeSeq, limit+1)
			if err != nil {
				return err
			}
			from := int64(0) // the page covers the seqs after from and before BeforeSeq
			if len(items) > limit || budget.Spent() && len(items) > 0 {
				items = items[max(len(items)-limit, 0):]
				page.NextCursor = strconv.FormatInt(items[0].Seq, 10)
				from = items[0].Seq - 1
			}
			page.Items, err = withTombstones(ctx, tx, own, sess, f.IncludeDeleted, items, from, f.BeforeSeq-1)
			return err
		}
		items, err := tx.MessagesAfter(bctx, own, sess, after, limit+1)
		if err != nil {
			return err
		}
		to := sess.LastSeq // the page covers the seqs after after, up to to
		if len(items) > limit || budget.Spent() && len(items) > 0 {
			items = items[:min(len(items), limit)]
			last := items[len(items)-1].Seq
			page.NextCursor = strconv.FormatInt(last, 10)
			to = last
		}
		page.Items, err = withTombstones(ctx, tx, own, sess, f.IncludeDeleted, items, after, to)
		return err
	})
	return page, err
}

// withTombstones merges into items (visible messages in seq order) the tombstones of sess with
// after < seq <= to, when include is set; otherwise it answers items as they are.
func withTombstones(ctx context.Context, tx store.Tx, own string, sess *carryon.Session, include bool, items []*carryon.Message, after, to int64) ([]*carryon.Message, error) {
	if !include || to <= after {
		return items, nil
	}
	dead, err := tx.MessageTombstones(ctx, own, sess, after, to)
	if err != nil || len(dead) == 0 {
		return items, err
	}
	out := make([]*carryon.Message, 0, len(items)+len(dead))
	for len(items) > 0 || len(dead) > 0 {
		if len(dead) == 0 || len(items) > 0 && items[0].Seq < dead[0].Seq {
			out, items = append(out, items[0]), items[1:]
		} else {
			out, dead = append(out, dead[0]), dead[1:]
		}
	}
	return out, nil
}

// estimateTokens is a cheap estimate (about four bytes a token) stored with each message; the
// context builder counts exactly with the model's tokenizer.
func estimateTokens(m carryon.NewMessage) int {
	return (len(m.Content)+len(m.ToolCalls)+3)/4 + 4
}
