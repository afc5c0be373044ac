// Package idempotency is the write contract's retry rule, in one place for every hub service: a
// write that carries a request id (Idempotency-Key, request_id) is applied once; a repeat of the
// same request gets the stored first answer and changes nothing; the same id with another request
// is refused. The record of the id commits in the same transaction as the write's effect, so
// there is no moment where the effect exists and the id does not.
//
// Sessions, runs, long-term memory and keys all write through Write, so a request id means the
// same on every route. The package decides nothing else: what a write does, and whether it is
// allowed, is the calling service's business. It knows nothing of HTTP; storage is package store.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Request identifies one write for its request id.
type Request struct {
	// Owner is the caller; request ids are scoped to it.
	Owner string
	// ID is the request id; empty runs the write without one.
	ID string
	// Op, Target and Input make the request's fingerprint: a repeat must match all three. Input
	// must not hold the request id itself.
	Op, Target string
	Input      any
	// Now is the time of the write; the record expires TTL after it.
	Now time.Time
	TTL time.Duration
	// Session names the session the record belongs to, from the write's answer: deleting or
	// purging that session forgets the record. Nil (or "") for a record of no session.
	Session func(out any) string
	// Ref and Resolve, when set, make the record keep a reference to the answer instead of the
	// answer: for a write whose answer is the rows it stored (an append's messages), so that the
	// record does not hold them a second time and the write does not encode them twice. Ref
	// returns the reference to out; Resolve reads the answer back from it, in the transaction of
	// a repeat, and must return the type Write's fn returns.
	Ref     func(out any) ([]byte, error)
	Resolve func(ctx context.Context, tx store.Tx, ref []byte) (any, error)
}

// refResult starts a stored answer that is a reference (Request.Ref) rather than JSON, which
// never starts with it.
const refResult = 0x01

// Write runs fn in a write transaction of st under the request id of req. With an id it first
// looks for the caller's record of it: the same request (same fingerprint) answers the stored
// result and runs nothing, another request is EKEYREUSED, a request still in progress EINFLIGHT.
// Otherwise fn runs and its result is stored with the id in the same transaction. An error of
// fn stores nothing, so a refused request may be retried with the same id. A receipt in ctx
// (carryon.NewContextWithReceipt) learns whether the answer was a replay.
func Write[T any](ctx context.Context, st store.Store, req Request, fn func(tx store.Tx) (T, error)) (T, error) {
	var out T
	if err := CheckID(req.ID); err != nil {
		return out, err
	}
	if req.ID != "" && req.Owner == "" {
		return out, carryon.Errorf(carryon.EINVALID, "a request id needs an authenticated caller: request ids are kept per user")
	}
	var fp string
	if req.ID != "" { // without an id there is nothing to compare: no encoding, no hash
		var err error
		if fp, err = fingerprint(req); err != nil {
			return out, err
		}
	}
	replayed := false
	err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out, replayed = *new(T), false
		if req.ID != "" {
			rec, err := tx.GetIdempotency(ctx, req.Owner, req.ID)
			switch {
			case err == nil && rec.ExpiresAt.After(req.Now):
				if err := matches(rec, req, fp); err != nil {
					return err
				}
				replayed = true
				return decode(ctx, tx, req, rec.Result, &out)
			case err != nil && carryon.ErrorCode(err) != carryon.ENOTFOUND:
				return err
			}
		}
		v, err := fn(tx)
		if err != nil {
			return err
		}
		out = v
		if req.ID == "" {
			return nil
		}
		return put(ctx, tx, req, fp, out)
	})
	if err != nil {
		return *new(T), err
	}
	if r := carryon.ReceiptFromContext(ctx); r != nil {
		r.Replayed = replayed
	}
	return out, nil
}

// Replace stores out as the answer of the request req, which Write stored before: for a write
// whose final answer is known only later (a chat knows its reply when its run has ended), so that
// every later repeat gets that answer. It changes nothing when the id is gone, has expired or
// names another request.
func Replace(ctx context.Context, st store.Store, req Request, out any) error {
	if req.ID == "" {
		return nil
	}
	fp, err := fingerprint(req)
	if err != nil {
		return err
	}
	return st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		rec, err := tx.GetIdempotency(ctx, req.Owner, req.ID)
		if carryon.ErrorCode(err) == carryon.ENOTFOUND {
			return nil
		} else if err != nil {
			return err
		}
		if rec.Fingerprint != fp || rec.State != store.IdemDone || !rec.ExpiresAt.After(req.Now) {
			return nil
		}
		result, err := json.Marshal(out)
		if err != nil {
			return err
		}
		rec.Result = result
		return tx.PutIdempotency(ctx, rec)
	})
}

// Used reports whether owner's request id names a record that is kept at now (its request was
// answered, or is in flight), and the session the record belongs to (Request.Session): for a
// caller that must know, before it reads anything, whether a request is a repeat. It reads in the
// caller's transaction and changes nothing; the write itself still decides (replay, reuse, in
// flight) under its own transaction.
func Used(ctx context.Context, tx store.Tx, owner, id string, now time.Time) (session string, used bool, err error) {
	if id == "" {
		return "", false, nil
	}
	if err := CheckID(id); err != nil {
		return "", false, err
	}
	rec, err := tx.GetIdempotency(ctx, owner, id)
	switch {
	case carryon.ErrorCode(err) == carryon.ENOTFOUND:
		return "", false, nil
	case err != nil:
		return "", false, err
	case !rec.ExpiresAt.After(now):
		return "", false, nil
	}
	return rec.SessionID, true, nil
}

// CheckID refuses a request id that is too long (over carryon.MaxRequestIDLength bytes), not
// UTF-8, or holds control characters. The empty id is valid: it means none.
func CheckID(id string) error {
	if len(id) > carryon.MaxRequestIDLength {
		return carryon.Errorf(carryon.EINVALID, "request_id is longer than %d bytes", carryon.MaxRequestIDLength)
	}
	if err := carryon.CheckText("request_id", id); err != nil {
		return err
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return carryon.Errorf(carryon.EINVALID, "request_id contains a control character")
		}
	}
	return nil
}

// matches checks that a live record answers req: the same fingerprint, and done.
func matches(rec *store.IdempotencyRecord, req Request, fp string) error {
	if rec.Fingerprint != fp {
		return carryon.Errorf(carryon.EKEYREUSED, "request id %q was already used for a different request; use a new request id for a new request", req.ID)
	}
	if rec.State == store.IdemInFlight {
		e := carryon.Errorf(carryon.EINFLIGHT, "request id %q is still being processed; retry later", req.ID)
		e.RetryAfterSeconds = 1
		return e
	}
	return nil
}

// decode sets out to the stored answer: JSON, or a reference that req.Resolve reads back.
func decode[T any](ctx context.Context, tx store.Tx, req Request, result []byte, out *T) error {
	if len(result) == 0 || result[0] != refResult {
		return json.Unmarshal(result, out)
	}
	if req.Resolve == nil {
		return carryon.Errorf(carryon.EINTERNAL, "request id %q stored a reference that %s cannot resolve", req.ID, req.Op)
	}
	v, err := req.Resolve(ctx, tx, result[1:])
	if err != nil {
		return err
	}
	t, ok := v.(T)
	if !ok {
		return carryon.Errorf(carryon.EINTERNAL, "request id %q: %s resolved its answer as %T", req.ID, req.Op, v)
	}
	*out = t
	return nil
}

func put(ctx context.Context, tx store.Tx, req Request, fp string, out any) error {
	var result []byte
	var err error
	if req.Ref != nil {
		var ref []byte
		if ref, err = req.Ref(out); err == nil {
			result = append([]byte{refResult}, ref...)
		}
	} else {
		result, err = json.Marshal(out)
	}
	if err != nil {
		return err
	}
	session := ""
	if req.Session != nil {
		session = req.Session(out)
	}
	return tx.PutIdempotency(ctx, &store.IdempotencyRecord{
		OwnerID: req.Owner, Key: req.ID, SessionID: session, Fingerprint: fp, State: store.IdemDone, Result: result,
		CreatedAt: req.Now, ExpiresAt: req.Now.Add(req.TTL),
	})
}

// fingerprint identifies a request by operation, target and input (JSON, which encoding/json
// writes deterministically: struct fields in order, map keys sorted).
func fingerprint(req Request) (string, error) {
	b, err := json.Marshal(req.Input)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(req.Op + "\x00" + req.Target + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}
