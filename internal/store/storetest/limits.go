package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testLimits(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("UserLimits", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		write(t, st, func(tx store.Tx) error {
			return tx.InsertUser(ctx, &carryon.User{ID: "usr_l", Name: "limited", CreatedAt: at(0)})
		})
		read(t, st, func(tx store.Tx) error {
			_, _, found, err := tx.UserLimits(ctx, "usr_l")
			if found {
				t.Errorf("limits found before any were set")
			}
			return err
		})
		rate, runs := 2.5, int64(3)
		write(t, st, func(tx store.Tx) error {
			return tx.PutUserLimits(ctx, "usr_l", carryon.Limits{RequestsPerSecond: &rate, MaxRuns: &runs}, at(5))
		})
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.PutUserLimits(ctx, "usr_nobody", carryon.Limits{MaxRuns: &runs}, at(5))
		})
		wantCode(t, err, carryon.ENOTFOUND)
		zero := int64(0)
		write(t, st, func(tx store.Tx) error {
			return tx.PutUserLimits(ctx, "usr_l", carryon.Limits{RequestsPerSecond: &rate, MaxStoredBytes: &zero}, at(6))
		})
		// The same limits again keep their time: a repeated PUT answers as the first.
		write(t, st, func(tx store.Tx) error {
			return tx.PutUserLimits(ctx, "usr_l", carryon.Limits{RequestsPerSecond: &rate, MaxStoredBytes: &zero}, at(7))
		})
		read(t, st, func(tx store.Tx) error {
			l, updated, found, err := tx.UserLimits(ctx, "usr_l")
			if err != nil {
				return err
			}
			if !found || !updated.Equal(at(6)) || l.RequestsPerSecond == nil || *l.RequestsPerSecond != 2.5 ||
				l.MaxRuns != nil || l.MaxStoredBytes == nil || *l.MaxStoredBytes != 0 {
				t.Errorf("limits = %+v at %v (found %v), want the second put's at %v", l, updated, found, at(6))
			}
			return nil
		})
	})
	t.Run("StoredBytes", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		a, b := newSession("usr_a", "sess_a", at(0)), newSession("usr_b", "sess_b", at(0))
		insertSession(t, st, a)
		insertSession(t, st, b)
		count := func(owner string) int64 {
			var n int64
			read(t, st, func(tx store.Tx) error {
				var err error
				n, err = tx.StoredBytes(ctx, owner)
				return err
			})
			return n
		}
		before := count("usr_a")
		appendMessages(t, st, a, "héllo", "world")
		appendMessages(t, st, b, "somebody else's")
		// "héllo" is 6 bytes (é is two), "world" 5: bytes, not characters.
		if got := count("usr_a") - before; got != 11 {
			t.Errorf("stored bytes grew by %d with two messages of 6 and 5 bytes, want 11", got)
		}
		if got := count("usr_nobody"); got != 0 {
			t.Errorf("stored bytes of a user with nothing = %d, want 0", got)
		}
	})
	t.Run("RunningRunsAndSlots", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		s := newSession("usr_r", "sess_r", at(0))
		insertSession(t, st, s)
		insertRun(t, st, newRun(s, "run_1", carryon.RunRunning, 1))
		insertRun(t, st, newRun(s, "run_2", carryon.RunQueued, 2))
		write(t, st, func(tx store.Tx) error {
			got, err := tx.LockRunSlots(ctx, "usr_r")
			if err != nil || !got {
				t.Errorf("LockRunSlots = %v, %v; want the free lock taken", got, err)
			}
			again, err := tx.LockRunSlots(ctx, "usr_r")
			if err != nil || !again {
				t.Errorf("LockRunSlots again in the same transaction = %v, %v; want it held", again, err)
			}
			n, err := tx.RunningRuns(ctx, "usr_r")
			if n != 1 {
				t.Errorf("RunningRuns = %d, want 1 (the queued run does not count)", n)
			}
			return err
		})
	})
	t.Run("Shares", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		write(t, st, func(tx store.Tx) error {
			return tx.PutLimitShares(ctx, []store.LimitShare{
				{InstanceID: "i1", UserID: "u1", Used: 5, Streams: 1, UpdatedAt: at(10)},
				{InstanceID: "i2", UserID: "u1", Used: 7, Streams: 0, UpdatedAt: at(1)},
			})
		})
		write(t, st, func(tx store.Tx) error {
			return tx.PutLimitShares(ctx, []store.LimitShare{{InstanceID: "i1", UserID: "u1", Used: 9, PrevUsed: 5, Streams: 2, UpdatedAt: at(11)}})
		})
		var got []store.LimitShare
		read(t, st, func(tx store.Tx) error {
			var err error
			got, err = tx.LimitSharesSince(ctx, at(5))
			return err
		})
		if len(got) != 1 || got[0].Used != 9 || got[0].PrevUsed != 5 || got[0].Streams != 2 || !got[0].UpdatedAt.Equal(at(11)) {
			t.Errorf("shares since 5s = %+v, want i1's replaced row alone", got)
		}
		write(t, st, func(tx store.Tx) error { return tx.DeleteLimitShares(ctx, at(5)) })
		read(t, st, func(tx store.Tx) error {
			var err error
			got, err = tx.LimitSharesSince(ctx, time.Time{})
			return err
		})
		if len(got) != 1 || got[0].InstanceID != "i1" {
			t.Errorf("shares after deleting the stale = %+v, want i1's alone", got)
		}
	})
}
