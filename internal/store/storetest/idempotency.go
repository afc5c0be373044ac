package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testIdempotency(t *testing.T, open func(t *testing.T) store.Store) {
	st := open(t)
	ctx := t.Context()
	get := func(owner, key string) (*store.IdempotencyRecord, error) {
		var r *store.IdempotencyRecord
		err := st.Read(ctx, func(tx store.Tx) error {
			var err error
			r, err = tx.GetIdempotency(ctx, owner, key)
			return err
		})
		return r, err
	}
	put := func(r *store.IdempotencyRecord) {
		t.Helper()
		write(t, st, func(tx store.Tx) error { return tx.PutIdempotency(ctx, r) })
	}
	check := func(owner, key string, want *store.IdempotencyRecord) {
		t.Helper()
		got, err := get(owner, key)
		if err != nil {
			t.Fatalf("GetIdempotency(%s, %s): %v", owner, key, err)
		}
		if got.OwnerID != want.OwnerID || got.Key != want.Key || got.SessionID != want.SessionID || got.Fingerprint != want.Fingerprint ||
			got.State != want.State || !bytes.Equal(got.Result, want.Result) ||
			!got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
			t.Fatalf("record = %+v, want %+v", got, want)
		}
	}

	t.Run("PutGet", func(t *testing.T) {
		_, err := get(ownerA, "req_1")
		wantCode(t, err, carryon.ENOTFOUND)
		a := &store.IdempotencyRecord{OwnerID: ownerA, Key: "req_1", SessionID: "sess_1", Fingerprint: "fp-a",
			State: store.IdemInFlight, CreatedAt: at(0), ExpiresAt: at(100)}
		put(a)
		check(ownerA, "req_1", a)
		// The key is scoped per owner: B does not see A's record and gets a record of its own.
		_, err = get(ownerB, "req_1")
		wantCode(t, err, carryon.ENOTFOUND)
		b := &store.IdempotencyRecord{OwnerID: ownerB, Key: "req_1", Fingerprint: "fp-b", State: store.IdemDone,
			Result: []byte(`{"b":1}`), CreatedAt: at(1), ExpiresAt: at(101)}
		put(b)
		check(ownerA, "req_1", a)
		check(ownerB, "req_1", b)
	})

	t.Run("Replace", func(t *testing.T) {
		done := &store.IdempotencyRecord{OwnerID: ownerA, Key: "req_1", Fingerprint: "fp-a", State: store.IdemDone,
			Result: []byte("{\"version\":3,\"bytes\":\"\\u00e9\"}\n"), CreatedAt: at(2), ExpiresAt: at(102)}
		put(done)
		check(ownerA, "req_1", done)
		check(ownerB, "req_1", &store.IdempotencyRecord{OwnerID: ownerB, Key: "req_1", Fingerprint: "fp-b",
			State: store.IdemDone, Result: []byte(`{"b":1}`), CreatedAt: at(1), ExpiresAt: at(101)})
	})

	// Long answers come back byte for byte, whether the driver compresses them or not (one that
	// repeats itself, one that does not compress).
	t.Run("LongResult", func(t *testing.T) {
		noisy := make([]byte, 3000)
		for i := range noisy {
			noisy[i] = byte(32 + (i*7919+i*i*31)%95)
		}
		for i, result := range [][]byte{
			bytes.Repeat([]byte(`{"seq":1,"role":"user","content":"continue the task"},`), 60),
			noisy,
		} {
			r := &store.IdempotencyRecord{OwnerID: ownerA, Key: "req_long_" + string(rune('a'+i)), Fingerprint: "fp",
				State: store.IdemDone, Result: result, CreatedAt: at(3), ExpiresAt: at(103)}
			put(r)
			check(ownerA, r.Key, r)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		write(t, st, func(tx store.Tx) error { return tx.DeleteIdempotency(ctx, ownerA, "req_1") })
		write(t, st, func(tx store.Tx) error { return tx.DeleteIdempotency(ctx, ownerA, "req_missing") })
		_, err := get(ownerA, "req_1")
		wantCode(t, err, carryon.ENOTFOUND)
		if _, err := get(ownerB, "req_1"); err != nil {
			t.Fatalf("deleting A's key removed B's: %v", err)
		}
	})

	t.Run("Sweep", func(t *testing.T) {
		for i, owner := range []string{ownerA, ownerB, ownerA} {
			put(&store.IdempotencyRecord{OwnerID: owner, Key: "sweep_" + string(rune('a'+i)), Fingerprint: "fp",
				State: store.IdemDone, CreatedAt: at(0), ExpiresAt: at(10 * (i + 1))})
		}
		for _, c := range []struct {
			before time.Time
			want   bool
		}{{at(10), false}, {at(11), true}} { // 10 is not before 10
			var has bool
			read(t, st, func(tx store.Tx) error {
				var err error
				has, err = tx.HasExpiredIdempotency(ctx, c.before)
				return err
			})
			if has != c.want {
				t.Fatalf("HasExpiredIdempotency(%v) = %v, want %v", c.before, has, c.want)
			}
		}
		var n int64
		write(t, st, func(tx store.Tx) error {
			var err error
			n, err = tx.SweepIdempotency(ctx, at(30)) // removes 10 and 20; 30 is not before 30
			return err
		})
		if n != 2 {
			t.Fatalf("SweepIdempotency removed %d, want 2", n)
		}
		for key, owner := range map[string]string{"sweep_a": ownerA, "sweep_b": ownerB} {
			_, err := get(owner, key)
			wantCode(t, err, carryon.ENOTFOUND)
		}
		for key, owner := range map[string]string{"sweep_c": ownerA, "req_1": ownerB} {
			if _, err := get(owner, key); err != nil {
				t.Fatalf("sweep removed unexpired %s: %v", key, err)
			}
		}
	})
}
