package limits_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/limits"
	"github.com/carryon-hub/carryon/store/sqlite"
)

func ptr[T any](v T) *T { return &v }

// Two limiters on one store share their counts: the requests one took come out of the other's
// bucket of the user at its next Share, and the streams open on one count on the other; a
// limiter that stopped sharing stops counting after five seconds.
func TestShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		db, err := sqlite.Open(ctx, ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		defaults := carryon.Limits{RequestsPerSecond: ptr(0.5), RequestBurst: ptr[int64](4), MaxStreams: ptr[int64](2)}
		a := limits.New(limits.Config{Defaults: defaults, Store: db, InstanceID: "a", Share: true})
		b := limits.New(limits.Config{Defaults: defaults, Store: db, InstanceID: "b", Share: true})
		share := func() {
			t.Helper()
			for _, l := range []*limits.Limiter{a, b} {
				if err := l.Share(ctx, false); err != nil {
					t.Fatal(err)
				}
			}
		}
		share() // both started
		for i := range 3 {
			adm, err := a.Enter(ctx, "u", false, false)
			if err != nil {
				t.Fatalf("request %d on a: %v", i+1, err)
			}
			adm.Leave()
		}
		share()
		adm, err := b.Enter(ctx, "u", false, false)
		if err != nil {
			t.Fatalf("b's first request, with one token left of four: %v", err)
		}
		adm.Leave()
		if adm.State != `"rate";r=0;t=8` {
			t.Errorf("b's RateLimit = %q, want no token left and 8 s to refill 4 at 0.5 a second", adm.State)
		}
		refused, err := b.Enter(ctx, "u", false, false)
		if carryon.ErrorCode(err) != carryon.ETOOMANY || refused.Refused != "rate" {
			t.Fatalf("b's second request = %v (refused by %q), want too_many_requests by the rate: a took three", err, refused.Refused)
		}
		if e, _ := carryon.AsError(err); e.RetryAfterSeconds != 2 {
			t.Errorf("Retry-After = %d, want 2 (one token at 0.5 a second)", e.RetryAfterSeconds)
		}
		// Streams: two open on a; b refuses a third once it has read a's share.
		s1, err := a.Enter(ctx, "v", true, false)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := a.Enter(ctx, "v", true, false)
		if err != nil {
			t.Fatal(err)
		}
		share()
		if _, err := b.Enter(ctx, "v", true, false); carryon.ErrorCode(err) != carryon.ETOOMANY {
			t.Fatalf("a third stream on b = %v, want too_many_requests", err)
		}
		s1.Leave()
		share()
		s3, err := b.Enter(ctx, "v", true, false)
		if err != nil {
			t.Fatalf("a stream on b after one on a closed: %v", err)
		}
		s3.Leave()
		// a stops sharing with one stream open: after 5 s its share no longer counts on b.
		time.Sleep(6 * time.Second)
		if err := b.Share(ctx, false); err != nil {
			t.Fatal(err)
		}
		x, err := b.Enter(ctx, "v", true, false)
		y, err2 := b.Enter(ctx, "v", true, false)
		if err != nil || err2 != nil {
			t.Fatalf("two streams on b after a went quiet: %v, %v", err, err2)
		}
		x.Leave()
		y.Leave()
		s2.Leave()
		// An instance that starts later counts only what a took since a's previous share of a
		// user, never a's whole history of it.
		for range 4 {
			adm, err := a.Enter(ctx, "w", false, false)
			if err != nil {
				t.Fatal(err)
			}
			adm.Leave()
		}
		if err := a.Share(ctx, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second) // a's bucket of w refills; its share goes stale
		c := limits.New(limits.Config{Defaults: defaults, Store: db, InstanceID: "c", Share: true})
		if err := c.Share(ctx, false); err != nil {
			t.Fatal(err)
		}
		adm, err = a.Enter(ctx, "w", false, false)
		if err != nil {
			t.Fatal(err)
		}
		adm.Leave()
		if err := a.Share(ctx, false); err != nil {
			t.Fatal(err)
		}
		if err := c.Share(ctx, false); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if adm, err := c.Enter(ctx, "w", false, false); err != nil {
				t.Fatalf("request %d of w on c, which should count only a's last one: %v", i+1, err)
			} else {
				adm.Leave()
			}
		}
		if _, err := c.Enter(ctx, "w", false, false); carryon.ErrorCode(err) != carryon.ETOOMANY {
			t.Fatalf("the fourth request of w on c = %v, want too_many_requests (3 here and 1 on a of a burst of 4)", err)
		}
	})
}

// A user's own limits, set by an admin, apply over the defaults at once on the instance that
// set them; bad limits are refused and change nothing; only an admin may set them.
func TestSetLimits(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := limits.New(limits.Config{Defaults: carryon.Limits{MaxStreams: ptr[int64](64)}, Store: db})
	admin := carryon.NewTrustedContext(ctx)
	if _, err := l.SetLimits(admin, "nobody", carryon.Limits{}); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("limits of a missing user: %v", err)
	}
	if _, err := l.SetLimits(carryon.NewContextWithUser(ctx, &carryon.User{ID: "usr_x"}), "usr_x", carryon.Limits{}); carryon.ErrorCode(err) != carryon.EFORBIDDEN {
		t.Fatalf("a user setting its own limits: %v", err)
	}
	if _, err := l.SetLimits(admin, "nobody", carryon.Limits{MaxRuns: ptr[int64](-1)}); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("a negative limit: %v", err)
	}
}
