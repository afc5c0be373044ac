package limits

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := rate{perSecond: 2, burst: 3}
		b := &bucket{fresh: true}
		for i := range 3 {
			if ok, _ := b.take(time.Now(), p); !ok {
				t.Fatalf("take %d of a full bucket of 3 refused", i+1)
			}
		}
		ok, wait := b.take(time.Now(), p)
		if ok || wait != 500*time.Millisecond {
			t.Fatalf("take of an empty bucket = %v, wait %v; want refused, 500ms (2 a second)", ok, wait)
		}
		if n, reset := b.remaining(p); n != 0 || reset != 1500*time.Millisecond {
			t.Errorf("remaining = %d, reset %v; want 0, 1.5s", n, reset)
		}
		time.Sleep(wait)
		if ok, _ := b.take(time.Now(), p); !ok {
			t.Fatalf("take after waiting the wait refused")
		}
		time.Sleep(time.Hour)
		b.refill(time.Now(), p)
		if n, _ := b.remaining(p); n != 3 {
			t.Errorf("after an hour the bucket holds %d, want its burst 3", n)
		}
		// Another instance took 5: the bucket goes into debt.
		b.debt = 5
		ok, wait = b.take(time.Now(), p)
		if ok || wait != 1500*time.Millisecond {
			t.Errorf("take after a debt of 5 = %v, wait %v; want refused, 1.5s (from -2 to 1 at 2 a second)", ok, wait)
		}
		// At most one bucket deep: a debt of 100 waits as long as one of 3.
		b.debt = 100
		if ok, wait = b.take(time.Now(), p); ok || wait != 2*time.Second {
			t.Errorf("take after a debt of 100 = %v, wait %v; want refused, 2s (from -3 to 1)", ok, wait)
		}
		if b.used != 4 {
			t.Errorf("used = %d, want the 4 tokens this bucket took", b.used)
		}
	})
}
