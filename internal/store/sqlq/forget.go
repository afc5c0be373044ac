package sqlq

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/carryon-hub/carryon"
)

// Forgetting a user: the statements of store.Forgetting. Each deletion takes at most a bounded
// number of rows (a subquery with LIMIT picks them), so one step is a short transaction whatever
// the size of the user's data.

// forgettingName is the name a user being forgotten has: its own name is gone with the first
// step, and the colon keeps it from ever matching a name a user may take.
func forgettingName(userID string) string { return "forgetting:" + userID }

// MarkForgetting renames the user, marks it, starts its receipt and deletes its keys.
func (t *Tx) MarkForgetting(ctx context.Context, userID string, at time.Time) (int64, error) {
	if err := t.Writable(); err != nil {
		return 0, err
	}
	receipt, err := json.Marshal(carryon.ForgetReceipt{UserID: userID, StartedAt: at})
	if err != nil {
		return 0, err
	}
	n, err := t.Conn.Exec(ctx, `UPDATE users SET name = ?, forgetting_at = ?, forget_receipt = ?
		WHERE id = ? AND forgetting_at IS NULL`, forgettingName(userID), Micros(at), string(receipt), userID)
	if err != nil {
		return 0, t.Wrap(err, "mark user forgetting")
	}
	if n == 0 {
		return 0, NotFound("user", userID)
	}
	keys, err := t.Conn.Exec(ctx, `DELETE FROM api_keys WHERE user_id = ?`, userID)
	if err != nil {
		return 0, t.Wrap(err, "delete keys")
	}
	return keys, t.AddForgotten(ctx, userID, carryon.ForgetCounts{Keys: keys})
}

// Forgetting returns the receipt so far of a user being forgotten. Inside Write it locks the
// user's row (Dialect.LockForUpdate), so the steps that add to the receipt take turns.
func (t *Tx) Forgetting(ctx context.Context, userID string) (*carryon.ForgetReceipt, error) {
	var text *string
	err := t.Conn.QueryRow(ctx, `SELECT forget_receipt FROM users WHERE id = ? AND forgetting_at IS NOT NULL`+
		t.lockIfWriting(t.d.LockForUpdate), userID).Scan(&text)
	if errors.Is(err, ErrNoRows) {
		return nil, NotFound("user being forgotten", userID)
	} else if err != nil {
		return nil, t.Wrap(err, "get forget receipt")
	}
	r := carryon.ForgetReceipt{UserID: userID}
	if text != nil {
		if err := json.Unmarshal([]byte(*text), &r); err != nil {
			return nil, t.Wrap(err, "read forget receipt")
		}
	}
	return &r, nil
}

// ForgettingUsers returns the ids of the users being forgotten, oldest mark first.
func (t *Tx) ForgettingUsers(ctx context.Context) ([]string, error) {
	return scanAll(t, ctx, "users being forgotten", scanString,
		`SELECT id FROM users WHERE forgetting_at IS NOT NULL ORDER BY forgetting_at, id`)
}

// AddForgotten adds counts to the stored receipt (a read and a write of the user's row, which
// Forgetting locks).
func (t *Tx) AddForgotten(ctx context.Context, userID string, counts carryon.ForgetCounts) error {
	if err := t.Writable(); err != nil {
		return err
	}
	if counts.Total() == 0 {
		return nil
	}
	r, err := t.Forgetting(ctx, userID)
	if err != nil {
		return err
	}
	r.Deleted.Add(counts)
	text, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = t.Conn.Exec(ctx, `UPDATE users SET forget_receipt = ? WHERE id = ?`, string(text), userID)
	return t.Wrap(err, "add to forget receipt")
}

// ForgetSessions returns up to limit of the owner's sessions that no session forks from (the
// leaves of its fork trees), newest first: deleting them one after the other never leaves a
// fork reading through a session whose rows are gone.
func (t *Tx) ForgetSessions(ctx context.Context, owner string, limit int) ([]string, error) {
	return scanAll(t, ctx, "sessions to forget", scanString, `SELECT s.id FROM sessions s
		WHERE s.owner_id = ? AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_id = s.id)
		ORDER BY s.created_at DESC, s.id DESC LIMIT ?`, owner, Limit(limit))
}

// sessionBatches are the deletions of ForgetSessionRows in order, each with the count it adds
// to (nil: rows the receipt does not count apart); a run's events and actions go before the run, and the runs last, so a runner still working
// on one fails at its next write and a cut-off step leaves nothing unreachable.
var sessionBatches = []struct {
	query string
	count func(*carryon.ForgetCounts) *int64
}{
	{`DELETE FROM run_events WHERE (run_id, seq) IN (SELECT e.run_id, e.seq FROM run_events e
		JOIN runs r ON r.id = e.run_id WHERE r.session_id = ?1 LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.Events }},
	{`DELETE FROM actions WHERE id IN (SELECT id FROM actions WHERE session_id = ?1 LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.Actions }},
	{`DELETE FROM message_writes WHERE session_key = ` + keyOf1 + ` AND (version, lo) IN
		(SELECT version, lo FROM message_writes WHERE session_key = ` + keyOf1 + ` ORDER BY version, lo LIMIT ?2)`,
		nil}, // the messages' run and request ids, which the receipt does not count apart
	{`DELETE FROM messages WHERE session_key = ` + keyOf1 + ` AND seq IN
		(SELECT seq FROM messages WHERE session_key = ` + keyOf1 + ` ORDER BY seq LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.Messages }},
	{`DELETE FROM message_deletions WHERE session_id = ?1 AND seq IN
		(SELECT seq FROM message_deletions WHERE session_id = ?1 ORDER BY seq LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.MessageDeletions }},
	{`DELETE FROM memory_revisions WHERE session_key = ` + keyOf1 + ` AND memory_version IN
		(SELECT memory_version FROM memory_revisions WHERE session_key = ` + keyOf1 + ` ORDER BY memory_version LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.MemoryRevisions }},
	{`DELETE FROM idempotency WHERE owner_id = (SELECT owner_id FROM sessions WHERE id = ?1) AND key IN
		(SELECT key FROM idempotency WHERE session_id = ?1 LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.RequestIDs }},
	{`DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE session_id = ?1 LIMIT ?2)`,
		func(c *carryon.ForgetCounts) *int64 { return &c.Runs }},
}

// keyOf1 is the key of the session whose id is the statement's first argument.
const keyOf1 = `(SELECT session_key FROM sessions WHERE id = ?1)`

// ForgetSessionRows deletes up to limit rows in the owner's session. ENOTFOUND when the session
// is not the owner's.
func (t *Tx) ForgetSessionRows(ctx context.Context, owner, sessionID string, limit int) (carryon.ForgetCounts, error) {
	var c carryon.ForgetCounts
	if err := t.Writable(); err != nil {
		return c, err
	}
	if err := t.ownSession(ctx, owner, sessionID); err != nil {
		return c, err
	}
	left := Limit(limit)
	// Up to limit search documents go in each step beside the rows it counts (the receipt does
	// not count them, and a step that deleted only them must not look like the last one); those
	// left when the counted rows are gone go with the session row (DeleteSession).
	if err := t.FlushSearch(ctx); err != nil {
		return c, err
	}
	if _, err := t.Conn.Exec(ctx, t.d.SessionSearch.ForgetBatch, sessionID, left); err != nil {
		return c, t.Wrap(err, "forget session rows")
	}
	for _, b := range sessionBatches {
		if left <= 0 {
			break
		}
		n, err := t.Conn.Exec(ctx, b.query, sessionID, left)
		if err != nil {
			return c, t.Wrap(err, "forget session rows")
		}
		if b.count != nil {
			*b.count(&c) += n
		}
		left -= n
	}
	return c, nil
}

// ForgetUserRows deletes up to limit of the owner's long-term memory items (the first by
// namespace and key: a driver that keeps a search index beside them deletes the same ones from it first)
// and request ids. It deletes no search document: a driver with a separate index overrides it.
func (t *Tx) ForgetUserRows(ctx context.Context, owner string, limit int) (carryon.ForgetCounts, error) {
	var c carryon.ForgetCounts
	if err := t.WritableBy(owner); err != nil {
		return c, err
	}
	left := Limit(limit)
	if _, err := t.Conn.Exec(ctx, `DELETE FROM memory_versions WHERE owner_id = ?1 AND (namespace, key) IN
		(SELECT namespace, key FROM memories WHERE owner_id = ?1 ORDER BY namespace, key LIMIT ?2)`, owner, left); err != nil {
		return c, t.Wrap(err, "forget long-term memory versions")
	}
	n, err := t.Conn.Exec(ctx, `DELETE FROM memories WHERE owner_id = ?1 AND (namespace, key) IN
		(SELECT namespace, key FROM memories WHERE owner_id = ?1 ORDER BY namespace, key LIMIT ?2)`, owner, left)
	if err != nil {
		return c, t.Wrap(err, "forget long-term memory")
	}
	c.LongTermItems, left = n, left-n
	if left > 0 { // no items left: the counter goes too
		if _, err := t.Conn.Exec(ctx, `DELETE FROM memory_generations WHERE owner_id = ?`, owner); err != nil {
			return c, t.Wrap(err, "forget memory counter")
		}
		if _, err := t.Conn.Exec(ctx, `DELETE FROM memory_extractions WHERE owner_id = ?`, owner); err != nil {
			return c, t.Wrap(err, "forget extraction marks")
		}
		n, err = t.Conn.Exec(ctx, `DELETE FROM idempotency WHERE owner_id = ?1 AND key IN
			(SELECT key FROM idempotency WHERE owner_id = ?1 LIMIT ?2)`, owner, left)
		if err != nil {
			return c, t.Wrap(err, "forget request ids")
		}
		c.RequestIDs = n
	}
	return c, nil
}

// DeleteForgottenUser deletes the row of a user being forgotten and returns its receipt.
func (t *Tx) DeleteForgottenUser(ctx context.Context, userID string) (*carryon.ForgetReceipt, error) {
	if err := t.Writable(); err != nil {
		return nil, err
	}
	r, err := t.Forgetting(ctx, userID)
	if err != nil {
		return nil, err
	}
	if _, err := t.Conn.Exec(ctx, `DELETE FROM user_settings WHERE user_id = ?`, userID); err != nil {
		return nil, t.Wrap(err, "delete forgotten user's settings")
	}
	_, err = t.Conn.Exec(ctx, `DELETE FROM users WHERE id = ? AND forgetting_at IS NOT NULL`, userID)
	return r, t.Wrap(err, "delete forgotten user")
}

func scanString(r Row) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}
