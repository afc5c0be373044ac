package users_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/users"
)

// rootAndBob makes an admin, root, and a user, bob, with bob's key.
func rootAndBob(t *testing.T, svc *users.Service) (root, bob *carryon.User, bobKey string) {
	t.Helper()
	trusted := carryon.NewTrustedContext(context.Background())
	root, _, err := svc.CreateUser(trusted, carryon.NewUser{Name: "root", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	if bob, bobKey, err = svc.CreateUser(trusted, carryon.NewUser{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	return root, bob, bobKey
}

// TestForgetUserRules: only an admin forgets, never itself; a forget needs a Forgetter; a user
// whose forget was cut off after the first step is invisible by name and id, and ForgetUser with
// its id continues the forget to the end.
func TestForgetUserRules(t *testing.T) {
	t.Parallel()
	bare, st := newService(t)
	trusted := carryon.NewTrustedContext(context.Background())
	root, bob, bobKey := rootAndBob(t, bare)
	if _, err := bare.ForgetUser(trusted, "bob"); carryon.ErrorCode(err) != carryon.EUNAVAILABLE {
		t.Fatalf("ForgetUser without a Forgetter: %v", err)
	}
	svc := users.New(st, nil).ForgetWith(sessions.New(st, sessions.Config{}))
	asBob := carryon.NewContextWithUser(context.Background(), bob)
	if _, err := svc.ForgetUser(asBob, "root"); carryon.ErrorCode(err) != carryon.EFORBIDDEN {
		t.Fatalf("a user forgetting an admin: %v", err)
	}
	asRoot := carryon.NewContextWithUser(context.Background(), root)
	if _, err := svc.ForgetUser(asRoot, "root"); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("an admin forgetting itself: %v", err)
	}
	if _, err := svc.ForgetUser(asRoot, "nobody"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("forgetting nobody: %v", err)
	}

	// A forget cut off after its first step (the mark), as a crash would leave it.
	err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
		_, err := tx.MarkForgetting(context.Background(), bob.ID, time.Now().UTC().Truncate(time.Microsecond))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(context.Background(), bobKey); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
		t.Fatalf("bob's key while he is forgotten: %v", err)
	}
	for _, name := range []string{"bob", bob.ID} {
		if _, err := svc.GetUser(asRoot, name); carryon.ErrorCode(err) != carryon.ENOTFOUND {
			t.Fatalf("GetUser(%s) while forgetting: %v", name, err)
		}
	}
	if _, err := svc.ForgetUser(asRoot, "bob"); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("the name is gone with the first step: %v", err)
	}
	r, err := svc.ForgetUser(asRoot, bob.ID)
	if err != nil || r.UserID != bob.ID || r.Deleted.Keys != 1 || r.FinishedAt.Before(r.StartedAt) {
		t.Fatalf("continuing the forget: %+v, %v", r, err)
	}
	if _, err := svc.ForgetUser(asRoot, bob.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("a repeat after the end: %v", err)
	}
	// The name is free again.
	if _, _, err := svc.CreateUser(trusted, carryon.NewUser{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
}

// A request that authenticated before its user's forget started makes nothing afterwards: a
// session or a long-term item made for the user once the forget has marked it, or after it ended,
// is refused with EUNAUTHORIZED and nothing is stored, so no row outlives the forget.
func TestNothingMadeForAForgottenUser(t *testing.T) {
	t.Parallel()
	bare, st := newService(t)
	root, bob, _ := rootAndBob(t, bare)
	sess := sessions.New(st, sessions.Config{})
	svc := users.New(st, nil).ForgetWith(sess)
	mem := longterm.New(st, nil)
	asBob := carryon.NewContextWithUser(context.Background(), bob) // authenticated before the forget
	if _, err := sess.Create(asBob, carryon.NewSession{Title: "before"}); err != nil {
		t.Fatal(err)
	}
	makeSomething := func(when string) {
		t.Helper()
		if _, err := sess.Create(asBob, carryon.NewSession{Title: when}); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Errorf("a session made %s: %v, want %s", when, err, carryon.EUNAUTHORIZED)
		}
		if _, err := mem.Put(asBob, "notes", "k", carryon.LongTermPut{Value: json.RawMessage(`"v"`)}); carryon.ErrorCode(err) != carryon.EUNAUTHORIZED {
			t.Errorf("a long-term item made %s: %v, want %s", when, err, carryon.EUNAUTHORIZED)
		}
	}
	err := st.Write(context.Background(), func(_ context.Context, tx store.Tx) error {
		_, err := tx.MarkForgetting(context.Background(), bob.ID, time.Now().UTC().Truncate(time.Microsecond))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	makeSomething("while the user is forgotten")
	asRoot := carryon.NewContextWithUser(context.Background(), root)
	if r, err := svc.ForgetUser(asRoot, bob.ID); err != nil || r.Deleted.Sessions != 1 {
		t.Fatalf("the forget: %+v, %v", r, err)
	}
	makeSomething("after the user was forgotten")
	err = st.Read(context.Background(), func(tx store.Tx) error {
		left, err := tx.ForgetSessions(context.Background(), bob.ID, 10)
		if err != nil || len(left) > 0 {
			t.Errorf("sessions of bob after the forget: %v, %v", left, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
