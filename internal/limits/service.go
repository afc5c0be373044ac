package limits

import (
	"context"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

var _ carryon.LimitService = (*Limiter)(nil)

// GetLimits returns a user's limits (by id or name), with the bytes stored (counted now) and
// the runs running. ENOTFOUND, EFORBIDDEN.
func (l *Limiter) GetLimits(ctx context.Context, who string) (*carryon.UserLimits, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if l.cfg.Store == nil {
		return nil, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server keeps no per-user limits")
	}
	var out *carryon.UserLimits
	err := l.cfg.Store.Read(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(ctx, who)
		if err != nil {
			return err
		}
		own, at, found, err := tx.UserLimits(ctx, u.ID)
		if err != nil {
			return err
		}
		out = &carryon.UserLimits{UserID: u.ID, Limits: own, Effective: l.shown(l.cfg.Defaults.Over(own))}
		if found {
			out.UpdatedAt = &at
		}
		if out.StoredBytes, err = tx.StoredBytes(ctx, u.ID); err != nil {
			return err
		}
		out.RunningRuns, err = tx.RunningRuns(ctx, u.ID)
		return err
	})
	return out, err
}

// SetLimits replaces the limits of a user (by id or name) with in, which applies on this instance
// at once and on the others within two seconds. EINVALID, ENOTFOUND, EFORBIDDEN.
func (l *Limiter) SetLimits(ctx context.Context, who string, in carryon.Limits) (*carryon.UserLimits, error) {
	if err := admin(ctx); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if l.cfg.Store == nil {
		return nil, carryon.Errorf(carryon.ENOTIMPLEMENTED, "this server keeps no per-user limits")
	}
	var id string
	err := l.cfg.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		u, err := tx.GetUser(ctx, who)
		if err != nil {
			return err
		}
		id = u.ID
		return tx.PutUserLimits(ctx, u.ID, in, l.cfg.Now().UTC().Truncate(time.Microsecond))
	})
	if err != nil {
		return nil, err
	}
	l.forget(id)
	return l.GetLimits(ctx, id)
}

// shown is lim with every field set (0 for no bound) and the burst a rate gets without one.
func (l *Limiter) shown(lim carryon.Limits) carryon.Limits {
	zero := func(p *int64) *int64 { v := carryon.Int(p); return &v }
	out := carryon.Limits{RequestBurst: zero(lim.RequestBurst), MaxRequests: zero(lim.MaxRequests), MaxStreams: zero(lim.MaxStreams),
		MaxRuns: zero(lim.MaxRuns), MaxStoredBytes: zero(lim.MaxStoredBytes)}
	r := 0.0
	if p, ok := policy(lim); ok {
		r, *out.RequestBurst = p.perSecond, int64(p.burst)
	}
	out.RequestsPerSecond = &r
	return out
}

func admin(ctx context.Context) error {
	if carryon.IsAdminContext(ctx) {
		return nil
	}
	if carryon.UserFromContext(ctx) == nil {
		return carryon.Errorf(carryon.EUNAUTHORIZED, "no authenticated user")
	}
	return carryon.Errorf(carryon.EFORBIDDEN, "only an admin may read or set a user's limits")
}
