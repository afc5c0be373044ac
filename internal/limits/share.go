package limits

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon/internal/store"
)

// Run shares the counts with the other instances every ShareEvery until ctx ends, when
// Config.Share is set (otherwise it returns at once). A failed round is logged and the next one
// tries again; meanwhile each instance counts alone.
func (l *Limiter) Run(ctx context.Context) {
	if !l.cfg.Share || l.cfg.Store == nil {
		return
	}
	tick := time.NewTicker(ShareEvery)
	defer tick.Stop()
	for round := 0; ; round++ {
		if err := l.Share(ctx, round%60 == 0); err != nil && ctx.Err() == nil {
			l.cfg.Logger.WarnContext(ctx, "sharing the limits' counts failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Share writes this instance's counts to the store and takes the other instances' in: the
// requests they took from a user's bucket since the last round are taken from this instance's
// bucket of the user, and the streams they have open are added to its count. prune also deletes
// the shares of instances that stopped a minute ago. Run calls it; tests call it to share at once.
func (l *Limiter) Share(ctx context.Context, prune bool) error {
	now := l.cfg.Now()
	var mine []store.LimitShare
	l.mu.Lock()
	for id, u := range l.users {
		if u.bucket.used != u.sharedUsed || u.streams != u.sharedStreams || u.streams > 0 {
			mine = append(mine, store.LimitShare{InstanceID: l.cfg.InstanceID, UserID: id, Used: u.bucket.used, PrevUsed: u.sharedUsed,
				Streams: u.streams, UpdatedAt: now})
		}
	}
	l.mu.Unlock()
	var theirs []store.LimitShare
	read := func(ctx context.Context, tx store.Tx) error {
		var err error
		theirs, err = tx.LimitSharesSince(ctx, now.Add(-shareStale))
		return err
	}
	var err error
	if len(mine) > 0 || prune {
		err = l.cfg.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.PutLimitShares(ctx, mine); err != nil {
				return err
			}
			if prune {
				if err := tx.DeleteLimitShares(ctx, now.Add(-time.Minute)); err != nil {
					return err
				}
			}
			return read(ctx, tx)
		})
	} else {
		err = l.cfg.Store.Read(ctx, func(tx store.Tx) error { return read(ctx, tx) })
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range mine {
		u := l.users[s.UserID]
		u.sharedUsed, u.sharedStreams = s.Used, s.Streams
	}
	for _, u := range l.users {
		u.remoteStreams = 0
	}
	for _, s := range theirs {
		if s.InstanceID == l.cfg.InstanceID {
			continue
		}
		k := [2]string{s.InstanceID, s.UserID}
		prev, known := l.seen[k]
		l.seen[k] = s.Used
		u := l.userLocked(s.UserID)
		u.remoteStreams += s.Streams
		switch {
		case !known && s.Used >= s.PrevUsed:
			// The first share seen of that instance and user: what it took since its previous
			// share (its last second). What it took before is older than this instance's view
			// (before it started, or in a row gone stale) and is not counted again.
			u.bucket.debt += float64(s.Used - s.PrevUsed)
		case known && s.Used >= prev:
			u.bucket.debt += float64(s.Used - prev)
		}
	}
	return nil
}
