package longterm

import (
	"context"
	"log/slog"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// locked is what a write that holds the owner's memory (store.LockLongTerm) did to the vectors,
// so that the instance's cached vectors can be patched once it committed.
type locked struct {
	before, after int64
	changes       []change
}

// lock holds the owner's memory for the write (and checks the owner, as every write does).
func (s *Service) lock(ctx context.Context, tx store.Tx, own string, w *locked) error {
	*w = locked{} // fn may run again
	if err := tx.LockOwner(ctx, own); err != nil {
		return err
	}
	gen, err := tx.LockLongTerm(ctx, own)
	w.before = gen - 1
	return err
}

// setVector stores the vector of the item just put (when there is one) and ends the write's
// record of what it did.
func (s *Service) setVector(ctx context.Context, tx store.Tx, own string, it *carryon.LongTermItem, vec []float32, w *locked) error {
	c := change{ns: it.Namespace, key: it.Key, exp: it.ExpiresAt}
	if vec != nil {
		ok, err := tx.SetLongTermVector(ctx, own, it.Namespace, it.Key, it.Version, store.Vector{Model: s.emb.Model, Values: vec})
		if err != nil {
			return err
		}
		if ok {
			c.vec = vec
		}
	}
	w.changes = append(w.changes, c)
	return s.done(ctx, tx, own, w)
}

// done reads the owner's memory counter at the end of the write.
func (s *Service) done(ctx context.Context, tx store.Tx, own string, w *locked) error {
	var err error
	w.after, err = tx.LongTermGeneration(ctx, own)
	return err
}

// committed patches the cached vectors with a write that committed (err nil and fn ran).
func (s *Service) committed(own string, w *locked, err error) {
	if s.vectors == nil || err != nil || w.after == 0 {
		return
	}
	s.vectors.apply(own, s.emb.Model, w.before, w.after, w.changes)
}

// log is where the service writes what it does not answer.
func (s *Service) log() *slog.Logger {
	if s.emb != nil && s.emb.Log != nil {
		return s.emb.Log
	}
	return slog.New(slog.DiscardHandler)
}
