package sessions

import (
	"context"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// validExternalID checks a session's client-chosen id and what a create does when it is taken.
func validExternalID(in carryon.NewSession) error {
	switch in.IfExists {
	case "", carryon.IfExistsReturn, carryon.IfExistsError:
	default:
		return carryon.Errorf(carryon.EINVALID, "if_exists must be %q or %q, not %q", carryon.IfExistsReturn, carryon.IfExistsError, in.IfExists)
	}
	if in.ExternalID == "" {
		if in.IfExists != "" {
			return carryon.Errorf(carryon.EINVALID, "if_exists says what to do when external_id names an existing session; it needs an external_id")
		}
		return nil
	}
	return checkExternalID(in.ExternalID)
}

// checkExternalID checks an external id: printable text of at most MaxExternalIDLen characters.
func checkExternalID(id string) error {
	if err := carryon.CheckText("external_id", id); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(id); n > carryon.MaxExternalIDLen {
		return carryon.Errorf(carryon.EINVALID, "external_id is %d characters; the limit is %d", n, carryon.MaxExternalIDLen)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) {
			return carryon.Errorf(carryon.EINVALID, "external_id contains the unprintable character %U", r)
		}
	}
	return nil
}

// byExternalID returns the owner's session with external id ext, or nil when it has none.
func byExternalID(ctx context.Context, tx store.Tx, own, ext string, now time.Time) (*carryon.Session, error) {
	items, err := tx.ListSessions(ctx, own, store.SessionQuery{ExternalID: ext, Now: now, Limit: 1})
	if err != nil || len(items) == 0 {
		return nil, err
	}
	sess := items[0]
	sess.Status = sess.StatusAt(now)
	return sess, nil
}

// existingTx answers the session a create's external id names, when there is one: unchanged, with
// the receipt's Existing set, or ECONFLICT when the create asked for IfExistsError. It answers
// nil, nil when the external id is free.
func existingTx(ctx context.Context, tx store.Tx, own string, in carryon.NewSession, now time.Time) (*carryon.Session, error) {
	if in.ExternalID == "" {
		return nil, nil
	}
	sess, err := byExternalID(ctx, tx, own, in.ExternalID, now)
	if err != nil || sess == nil {
		return nil, err
	}
	if in.IfExists == carryon.IfExistsError {
		return nil, carryon.Errorf(carryon.ECONFLICT, "a session with external id %q exists: %s", in.ExternalID, sess.ID)
	}
	if r := carryon.ReceiptFromContext(ctx); r != nil {
		r.Existing = true
	}
	return sess, nil
}
