package sessions

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
)

var _ carryon.RequestIDLookup = (*Service)(nil)

// RequestIDUsed reports whether the caller's request id names a kept record, and the session its
// write belongs to (carryon.RequestIDLookup): a front door asks it before the lookups that
// translate a request, so that a repeat goes to the write the first request made, whatever those
// lookups would find now. Every service keeps its request ids through package idempotency in the one store,
// so it answers for the writes of runs as well. EINVALID for an id no write would take.
func (s *Service) RequestIDUsed(ctx context.Context, id string) (string, bool, error) {
	var session string
	var used bool
	err := s.read(ctx, func(tx store.Tx, own string, now time.Time) error {
		var err error
		session, used, err = idempotency.Used(ctx, tx, own, id, now)
		return err
	})
	return session, used, err
}
