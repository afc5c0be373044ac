// Package limits bounds each user's use of the server: the request rate (a token bucket per
// user), the requests in flight and the event streams open at once, and the bytes stored (a
// quota). It owns the counting and the admin's per-user limits (carryon.LimitService); the front
// doors ask it before they serve a request (package httpapi's gate), and the run manager reads
// the per-user run limit from the store itself when it claims a run.
//
// With several instances over one PostgreSQL (Config.Share), each instance writes what it
// counted of each user to the table limit_shares about once a second and takes the other
// instances' counts into its own: their requests out of its bucket of the user, their streams
// into its count. The limits then hold across instances within one second's traffic of each.
// An instance counts only what it served itself; it never takes a count from a client.
//
// It must not decide anything but these bounds, and it never writes to the store on a request's
// path: the shares are written by Run, the admin's limits by SetLimits.
package limits

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// Defaults of Config.
const (
	// DefaultRecount is how old a user's count of stored bytes may be before a write counts
	// again: the quota's tolerance is what a user writes in that time.
	DefaultRecount = 5 * time.Second
	// ShareEvery is how often an instance writes and reads the limit shares.
	ShareEvery = time.Second
	// overridesTTL is how long an instance keeps a user's limits before it reads them again: a
	// change by an admin on another instance applies within it.
	overridesTTL = 2 * time.Second
	// shareStale is how old another instance's share may be and still count: an instance that
	// stopped writing stops counting after it.
	shareStale = 5 * time.Second
)

// Config is what a Limiter depends on.
type Config struct {
	// Defaults are the server's limits, for every user without limits of their own; a nil field
	// or 0 is no bound.
	Defaults carryon.Limits
	// Store holds the admin's per-user limits, the shares and what the quota counts; nil means the
	// defaults alone, no quota and no sharing.
	Store store.Store
	// InstanceID names this instance in limit_shares; it must differ between instances.
	InstanceID string
	// Share makes Run share the counts through the store (several instances on PostgreSQL).
	Share bool
	// Recount is DefaultRecount when zero.
	Recount time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the failures of the background sharing; nil discards.
	Logger *slog.Logger
}

// Limiter counts every user's requests, streams and bytes against their limits. It is safe for
// concurrent use.
type Limiter struct {
	cfg   Config
	mu    sync.Mutex
	users map[string]*user
	seen  map[[2]string]int64 // another instance's last share of a user: (instance, user) → used
}

// user is what a Limiter keeps of one user.
type user struct {
	inflight, streams int64
	remoteStreams     int64 // the user's streams open on the other instances
	bucket            bucket
	limits            carryon.Limits // the admin's, as last read
	limitsAt          time.Time
	bytes             int64
	bytesAt           time.Time
	counting          bool // a count of bytes is under way
	sharedUsed        int64
	sharedStreams     int64
}

// New returns a Limiter under cfg.
func New(cfg Config) *Limiter {
	if cfg.Recount <= 0 {
		cfg.Recount = DefaultRecount
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Limiter{cfg: cfg, users: map[string]*user{}, seen: map[[2]string]int64{}}
}

// userLocked returns the state of user id; l.mu is held.
func (l *Limiter) userLocked(id string) *user {
	u := l.users[id]
	if u == nil {
		u = &user{bucket: bucket{fresh: true}}
		l.users[id] = u
	}
	return u
}

// Effective returns the limits that apply to user id: the admin's for the user over the
// defaults. The admin's are read from the store at most every two seconds; when the read fails
// the last ones read apply.
func (l *Limiter) Effective(ctx context.Context, id string) carryon.Limits {
	now := l.cfg.Now()
	l.mu.Lock()
	u := l.userLocked(id)
	own, fresh := u.limits, now.Sub(u.limitsAt) < overridesTTL
	l.mu.Unlock()
	if !fresh && l.cfg.Store != nil {
		var got carryon.Limits
		err := l.cfg.Store.Read(ctx, func(tx store.Tx) error {
			var err error
			got, _, _, err = tx.UserLimits(ctx, id)
			return err
		})
		l.mu.Lock()
		if err == nil {
			u.limits, u.limitsAt, own = got, now, got
		}
		l.mu.Unlock()
	}
	return l.cfg.Defaults.Over(own)
}

// policy returns the token bucket of lim, and false when it has no rate. A rate without a burst
// may burst one second of it.
func policy(lim carryon.Limits) (rate, bool) {
	if lim.RequestsPerSecond == nil || *lim.RequestsPerSecond <= 0 {
		return rate{}, false
	}
	r := rate{perSecond: *lim.RequestsPerSecond, burst: float64(carryon.Int(lim.RequestBurst))}
	if r.burst <= 0 {
		r.burst = math.Max(1, math.Ceil(r.perSecond))
	}
	return r, true
}

// Admission is a request the Limiter let in: Leave uncounts it. Policy and State are the values
// of the RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers) for its
// answer, "" when the user has no rate limit; they are set on a refusal too.
type Admission struct {
	Policy, State string
	// Refused names the limit that refused the request ("requests", "streams", "rate",
	// "quota"), "" when none did.
	Refused string
	leave   func()
}

// Leave uncounts the request; it may be called once.
func (a *Admission) Leave() {
	if a != nil && a.leave != nil {
		a.leave()
		a.leave = nil
	}
}

// Enter counts a request of user id (an event stream when stream is set; one that would store
// more when grows is set) and returns its Admission, or refuses it: ETOOMANY (with
// RetryAfterSeconds) when the user has as many requests in flight or streams open as allowed or
// no token left in its bucket, EQUOTA when grows and the user's stored bytes are at its quota.
// The Admission is never nil: a refusal carries the rate fields too.
func (l *Limiter) Enter(ctx context.Context, id string, stream, grows bool) (*Admission, error) {
	lim := l.Effective(ctx, id)
	now := l.cfg.Now()
	adm := &Admission{}
	l.mu.Lock()
	u := l.userLocked(id)
	if max := carryon.Int(lim.MaxRequests); max > 0 && u.inflight >= max {
		l.mu.Unlock()
		adm.Refused = "requests"
		return adm, tooMany("requests in flight", max)
	}
	if max := carryon.Int(lim.MaxStreams); stream && max > 0 && u.streams+u.remoteStreams >= max {
		l.mu.Unlock()
		adm.Refused = "streams"
		return adm, tooMany("event streams open", max)
	}
	if p, ok := policy(lim); ok {
		took, wait := u.bucket.take(now, p)
		left, reset := u.bucket.remaining(p)
		adm.Policy = fmt.Sprintf(`"rate";q=%d;w=%d`, int64(p.burst), max(1, ceilSeconds(time.Duration(p.burst/p.perSecond*float64(time.Second)))))
		adm.State = fmt.Sprintf(`"rate";r=%d;t=%d`, left, max(0, ceilSeconds(reset)))
		if !took {
			l.mu.Unlock()
			e := carryon.Errorf(carryon.ETOOMANY, "this user may make %g requests a second (bursts of %d) and has none left; retry in %s",
				p.perSecond, int64(p.burst), wait.Round(time.Millisecond))
			e.RetryAfterSeconds = int(max(1, ceilSeconds(wait)))
			adm.Refused = "rate"
			return adm, e
		}
	}
	u.inflight++
	if stream {
		u.streams++
	}
	l.mu.Unlock()
	adm.leave = func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		u.inflight--
		if stream {
			u.streams--
		}
	}
	if grows {
		if err := l.quota(ctx, id, lim); err != nil {
			adm.Leave()
			if carryon.ErrorCode(err) == carryon.EQUOTA {
				adm.Refused = "quota"
			}
			return adm, err
		}
	}
	return adm, nil
}

// Quota refuses with EQUOTA when the user in ctx stores as many bytes as its quota allows (for a
// door that tells a write from a read only after the gate: /mcp's tools); nil without a user in
// ctx or a quota.
func (l *Limiter) Quota(ctx context.Context) error {
	id := carryon.UserIDFromContext(ctx)
	if id == "" {
		return nil
	}
	return l.quota(ctx, id, l.Effective(ctx, id))
}

// quota refuses with EQUOTA when user id stores as many bytes as lim allows.
func (l *Limiter) quota(ctx context.Context, id string, lim carryon.Limits) error {
	max := carryon.Int(lim.MaxStoredBytes)
	if max <= 0 {
		return nil
	}
	n, err := l.storedBytes(ctx, id)
	if err == nil && n >= max {
		err = carryon.Errorf(carryon.EQUOTA,
			"this user stores %d bytes and may store %d: nothing more is written until some is deleted (sessions, messages, long-term memory); reads and deletes still work",
			n, max)
	}
	return err
}

func tooMany(what string, limit int64) error {
	e := carryon.Errorf(carryon.ETOOMANY, "this user has %d %s, the most allowed; retry when one has ended", limit, what)
	e.RetryAfterSeconds = 1
	return e
}

// storedBytes is the user's count of stored bytes. A count older than Config.Recount is made
// again in the background while the request goes on with the last one (a count reads every row
// of the user: 22 ms for 100,000 messages, docs/BENCHMARKS.md); only a user never counted waits
// for the first. One count at a time per user.
func (l *Limiter) storedBytes(ctx context.Context, id string) (int64, error) {
	if l.cfg.Store == nil {
		return 0, nil
	}
	now := l.cfg.Now()
	l.mu.Lock()
	u := l.userLocked(id)
	n, never := u.bytes, u.bytesAt.IsZero()
	if u.counting || now.Sub(u.bytesAt) < l.cfg.Recount {
		l.mu.Unlock()
		return n, nil
	}
	u.counting = true
	l.mu.Unlock()
	if !never {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if _, err := l.count(ctx, u, id, now); err != nil {
				l.cfg.Logger.WarnContext(ctx, "counting a user's stored bytes failed", "user_id", id, "err", err)
			}
		}()
		return n, nil
	}
	return l.count(ctx, u, id, now)
}

// count counts user id's stored bytes into u, as of now.
func (l *Limiter) count(ctx context.Context, u *user, id string, now time.Time) (int64, error) {
	var n int64
	err := l.cfg.Store.Read(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.StoredBytes(ctx, id)
		return err
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	u.counting = false
	if err != nil {
		return u.bytes, err
	}
	u.bytes, u.bytesAt = n, now
	return n, nil
}

// forget drops what l keeps of user id's limits and bytes, so that the next request reads them
// again (after an admin changed them).
func (l *Limiter) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(id)
	u.limitsAt, u.bytesAt = time.Time{}, time.Time{}
}
