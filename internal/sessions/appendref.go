package sessions

import (
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

// An append's request id keeps a reference to its answer, not the answer: the answer is the
// messages the append stored, which the session keeps anyway, so the record stays a few bytes
// and the write does not encode and compress them a second time. A repeat reads them back: the
// same messages, byte for byte, except that a message deleted since the append is left out of
// the repeat's answer (its content is gone from the session's history, and a repeat does not
// bring it back).

// appendAnswer is the reference: the session version the append made, the seq of its first
// message and how many it stored, and the memory version of its working_memory_patch (absent:
// the append had none).
type appendAnswer struct {
	Version int64  `json:"v"`
	Seq     int64  `json:"s"`
	N       int    `json:"n"`
	Memory  *int64 `json:"m,omitempty"`
}

// appendRef makes req keep an append's answer as an appendAnswer.
func appendRef(req *idempotency.Request) {
	owner, id := req.Owner, req.Target
	req.Ref = func(out any) ([]byte, error) {
		res := out.(*carryon.AppendResult)
		a := appendAnswer{Version: res.Version, N: len(res.Messages)}
		if a.N > 0 {
			a.Seq = res.Messages[0].Seq
		}
		if res.WorkingMemory != nil {
			a.Memory = &res.WorkingMemory.WorkingMemoryVersion
		}
		return json.Marshal(a)
	}
	req.Resolve = func(ctx context.Context, tx store.Tx, ref []byte) (any, error) {
		var a appendAnswer
		if err := json.Unmarshal(ref, &a); err != nil {
			return nil, carryon.Errorf(carryon.EINTERNAL, "request id %q: stored answer: %v", req.ID, err)
		}
		return resolveAppend(ctx, tx, owner, id, a)
	}
}

// resolveAppend reads the answer of the append a refers to.
func resolveAppend(ctx context.Context, tx store.Tx, owner, id string, a appendAnswer) (*carryon.AppendResult, error) {
	sess, err := tx.GetSession(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	res := &carryon.AppendResult{SessionID: id, Version: a.Version, Messages: []*carryon.Message{}}
	if a.N > 0 {
		msgs, err := tx.MessagesAfter(ctx, owner, sess, a.Seq-1, a.N)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Seq < a.Seq+int64(a.N) {
				res.Messages = append(res.Messages, m)
			}
		}
	}
	if a.Memory != nil {
		wm := &carryon.WorkingMemoryState{SessionID: id, Version: a.Version, WorkingMemoryVersion: *a.Memory, WorkingMemory: carryon.WorkingMemory{}}
		if *a.Memory > 0 {
			rev, err := tx.GetWorkingMemoryRevision(ctx, owner, id, *a.Memory)
			if err != nil {
				return nil, err
			}
			wm.WorkingMemory = nonNil(rev.Document)
		}
		res.WorkingMemory = wm
	}
	return res, nil
}
