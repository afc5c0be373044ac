package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// DeleteMessage deletes one message of a session: a tombstone hides it from every later read of
// the session and from the model's context, and the session moves to its next version (the
// message's seq is never given again). It is a write like any other: owner, status, expiry,
// expected version and request id are checked in its transaction.
//
// The delete redacts every copy of the text in its transaction (store.Tx.DeleteMessage): the
// stored row is erased once no session sees it (forks may share it: a fork made before the delete
// keeps the message; a fork made after it, or at a later version, does not see it; a fork's
// delete of an inherited message hides it from the fork only), and the session's runs, their
// events, its request ids' answers, a title derived from the message and the summaries that
// cover it lose it. A tool call whose result is deleted (or the
// reverse) stays in the history; the context builder drops the half that lost its pair, so the
// model still gets a valid conversation. ENOTFOUND when the session has no visible message seq.
func (s *Service) DeleteMessage(ctx context.Context, id string, seq int64, opt carryon.WriteOptions) (*carryon.Session, error) {
	if seq < 1 {
		return nil, carryon.Errorf(carryon.EINVALID, "seq must be positive, not %d", seq)
	}
	key := opt.RequestID
	opt.RequestID = ""
	input := struct {
		Seq int64 `json:"seq"`
		carryon.WriteOptions
	}{seq, opt}
	return Write(ctx, s, "messages.delete", id, key, input, func(tx store.Tx, own string, now time.Time) (*carryon.Session, error) {
		sess, err := LoadWritable(ctx, tx, own, id, opt.ExpectedVersion, nil, now)
		if err != nil {
			return nil, err
		}
		if err := tx.DeleteMessage(ctx, own, sess, seq, sess.Version+1, now); err != nil {
			return nil, err
		}
		sess.MessageCount--
		if err := Touch(ctx, tx, sess, now); err != nil {
			return nil, err
		}
		return sess, nil
	})
}
