package storetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

func testUsers(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("Settings", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		write(t, st, func(tx store.Tx) error {
			for _, id := range []string{"usr_1", "usr_2"} {
				if err := tx.InsertUser(ctx, &carryon.User{ID: id, Name: "n" + id, CreatedAt: at(1)}); err != nil {
					return err
				}
			}
			return nil
		})
		settings := func(id string) carryon.UserSettings {
			var s carryon.UserSettings
			read(t, st, func(tx store.Tx) (err error) { s, err = tx.UserSettings(ctx, id); return err })
			return s
		}
		if got := settings("usr_1"); got != carryon.DefaultUserSettings {
			t.Fatalf("a user who changed nothing has %+v, want the defaults", got)
		}
		for _, learn := range []bool{false, false, true, false} {
			write(t, st, func(tx store.Tx) error {
				return tx.PutUserSettings(ctx, "usr_1", carryon.UserSettings{LearnFacts: learn})
			})
			if got := settings("usr_1"); got.LearnFacts != learn {
				t.Fatalf("after storing learn_facts %v: %+v", learn, got)
			}
		}
		if got := settings("usr_2"); got != carryon.DefaultUserSettings {
			t.Fatalf("another user's settings changed: %+v", got)
		}
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.PutUserSettings(ctx, "usr_nobody", carryon.UserSettings{})
		})
		wantCode(t, err, carryon.ENOTFOUND)
	})
	t.Run("InsertGetList", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		users := []*carryon.User{
			{ID: "usr_3", Name: "carol", CreatedAt: at(3)},
			{ID: "usr_1", Name: "alice", Admin: true, CreatedAt: at(1)},
			{ID: "usr_2", Name: "bob", CreatedAt: at(2)},
		}
		write(t, st, func(tx store.Tx) error {
			for _, u := range users {
				if err := tx.InsertUser(ctx, u); err != nil {
					return err
				}
			}
			return nil
		})
		read(t, st, func(tx store.Tx) error {
			for _, want := range users {
				for _, key := range []string{want.ID, want.Name} {
					got, err := tx.GetUser(ctx, key)
					if err != nil {
						t.Fatalf("GetUser(%q): %v", key, err)
					}
					checkUser(t, got, want)
				}
			}
			_, err := tx.GetUser(ctx, "nobody")
			wantCode(t, err, carryon.ENOTFOUND)
			list, err := tx.ListUsers(ctx)
			if err != nil {
				return err
			}
			var names []string
			for _, u := range list {
				names = append(names, u.Name)
			}
			if want := []string{"alice", "bob", "carol"}; !reflect.DeepEqual(names, want) {
				t.Fatalf("ListUsers names = %v, want %v", names, want)
			}
			return nil
		})
	})

	t.Run("DuplicateName", func(t *testing.T) {
		st := open(t)
		write(t, st, func(tx store.Tx) error {
			return tx.InsertUser(t.Context(), &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: at(0)})
		})
		err := st.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
			return tx.InsertUser(t.Context(), &carryon.User{ID: "usr_2", Name: "alice", CreatedAt: at(1)})
		})
		wantCode(t, err, carryon.ECONFLICT)
		read(t, st, func(tx store.Tx) error {
			_, err := tx.GetUser(t.Context(), "usr_2")
			wantCode(t, err, carryon.ENOTFOUND)
			return nil
		})
	})

	t.Run("Keys", func(t *testing.T) {
		st := open(t)
		ctx := t.Context()
		alice := &carryon.User{ID: "usr_1", Name: "alice", CreatedAt: at(0)}
		bob := &carryon.User{ID: "usr_2", Name: "bob", CreatedAt: at(0)}
		k1 := &carryon.APIKey{ID: "key_1", UserID: alice.ID, Prefix: "ck_aaaa", Hash: "hash1", CreatedAt: at(1)}
		k2 := &carryon.APIKey{ID: "key_2", UserID: alice.ID, Prefix: "ck_bbbb", Hash: "hash2", CreatedAt: at(2)}
		k3 := &carryon.APIKey{ID: "key_3", UserID: bob.ID, Prefix: "ck_cccc", Hash: "hash3", CreatedAt: at(3)}
		write(t, st, func(tx store.Tx) error {
			for _, u := range []*carryon.User{alice, bob} {
				if err := tx.InsertUser(ctx, u); err != nil {
					return err
				}
			}
			for _, k := range []*carryon.APIKey{k2, k1, k3} { // out of order on purpose
				if err := tx.InsertKey(ctx, k); err != nil {
					return err
				}
			}
			return nil
		})
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertKey(ctx, &carryon.APIKey{ID: "key_x", UserID: "usr_missing", Prefix: "ck_x", Hash: "hashx", CreatedAt: at(4)})
		})
		wantCode(t, err, carryon.ENOTFOUND)

		read(t, st, func(tx store.Tx) error {
			k, u, err := tx.KeyByHash(ctx, "hash2")
			if err != nil {
				t.Fatalf("KeyByHash: %v", err)
			}
			checkKey(t, k, k2)
			checkUser(t, u, alice)
			_, _, err = tx.KeyByHash(ctx, "hash-unknown")
			wantCode(t, err, carryon.ENOTFOUND)
			keys, err := tx.ListKeys(ctx, alice.ID)
			if err != nil {
				return err
			}
			if len(keys) != 2 {
				t.Fatalf("ListKeys(alice) = %d keys, want 2", len(keys))
			}
			checkKey(t, keys[0], k1)
			checkKey(t, keys[1], k2)
			return nil
		})

		write(t, st, func(tx store.Tx) error { return tx.RevokeKey(ctx, k1.ID, at(10)) })
		for _, id := range []string{k1.ID, "key_missing"} {
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.RevokeKey(ctx, id, at(11)) })
			wantCode(t, err, carryon.ENOTFOUND)
		}
		read(t, st, func(tx store.Tx) error {
			_, _, err := tx.KeyByHash(ctx, "hash1")
			wantCode(t, err, carryon.ENOTFOUND)
			if _, _, err := tx.KeyByHash(ctx, "hash2"); err != nil {
				t.Fatalf("KeyByHash(unrevoked key): %v", err)
			}
			keys, err := tx.ListKeys(ctx, alice.ID)
			if err != nil {
				return err
			}
			if len(keys) != 2 || keys[0].ID != k1.ID {
				t.Fatalf("ListKeys after revoke = %+v, want both keys, revoked first", keys)
			}
			if keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(at(10)) {
				t.Fatalf("RevokedAt = %v, want %v", keys[0].RevokedAt, at(10))
			}
			if keys[1].RevokedAt != nil {
				t.Fatalf("unrevoked key has RevokedAt %v", keys[1].RevokedAt)
			}
			bobKeys, err := tx.ListKeys(ctx, bob.ID)
			if err != nil || len(bobKeys) != 1 || bobKeys[0].ID != k3.ID {
				t.Fatalf("ListKeys(bob) = %+v, %v; want only %s", bobKeys, err, k3.ID)
			}
			return nil
		})
	})
}

func checkUser(t testing.TB, got, want *carryon.User) {
	t.Helper()
	if got.ID != want.ID || got.Name != want.Name || got.Admin != want.Admin || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("user = %+v, want %+v", got, want)
	}
}

func checkKey(t testing.TB, got, want *carryon.APIKey) {
	t.Helper()
	if got.ID != want.ID || got.UserID != want.UserID || got.Prefix != want.Prefix || got.Hash != want.Hash ||
		!got.CreatedAt.Equal(want.CreatedAt) || (got.RevokedAt == nil) != (want.RevokedAt == nil) {
		t.Fatalf("key = %+v, want %+v", got, want)
	}
}
