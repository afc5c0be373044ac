package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/pgtest"
	"github.com/carryon-hub/carryon/internal/poll"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/postgres"
)

// TestReadReplica runs the driver on a real primary and a streaming standby: a Read marked
// store.WithStaleRead is served by the standby (it shows what the standby has, not the primary)
// while its replay is within the bound, by the primary once it is further behind, when fn finds
// nothing on the standby, when the standby is down, and an unmarked Read or a Write never by it.
func TestReadReplica(t *testing.T) {
	start := time.Now()
	pair := pgtest.NewPair(t)
	t.Logf("primary and standby up in %s", time.Since(start).Round(time.Millisecond))
	const bound = 3 * time.Second
	ctx := t.Context()
	db, err := postgres.Open(ctx, pair.Primary, postgres.WithReadReplica(pair.Standby, bound))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	addUser := func(name string) {
		t.Helper()
		if err := db.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertUser(ctx, &carryon.User{ID: "usr_" + name, Name: name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// names reads the users' names, marked or not, and says whether the replica answered.
	names := func(marked bool) ([]string, bool) {
		t.Helper()
		rctx, sr := ctx, (*store.StaleRead)(nil)
		if marked {
			rctx, sr = store.WithStaleRead(ctx)
		}
		var out []string
		if err := db.Read(rctx, func(tx store.Tx) error {
			users, err := tx.ListUsers(rctx)
			out = out[:0]
			for _, u := range users {
				out = append(out, u.Name)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out, sr.Replica()
	}

	addUser("a")
	poll.Eventually(t, "a marked read served by the standby, with what the primary wrote", func() bool {
		got, replica := names(true)
		return replica && slices.Contains(got, "a")
	})
	if _, replica := names(false); replica {
		t.Fatal("an unmarked read was served by the replica")
	}

	pair.PauseReplay()
	paused := time.Now()
	addUser("b")
	got, replica := names(true)
	if !replica || slices.Contains(got, "b") {
		t.Fatalf("right after a write with replay paused: names %v, replica %v; want the standby's answer without b", got, replica)
	}
	if got, replica := names(false); replica || !slices.Contains(got, "b") {
		t.Fatalf("unmarked read: names %v, replica %v; want the primary's answer with b", got, replica)
	}
	// A marked read of what the standby does not have yet is answered by the primary.
	gctx, sr := store.WithStaleRead(ctx)
	if err := db.Read(gctx, func(tx store.Tx) error { _, err := tx.GetUser(gctx, "b"); return err }); err != nil || sr.Replica() {
		t.Fatalf("a marked read of a row the standby lacks: err %v, replica %v; want the primary's row", err, sr.Replica())
	}
	// A write with a marked context goes to the primary (the standby would refuse it).
	wctx, wsr := store.WithStaleRead(ctx)
	if err := db.Write(wctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertUser(ctx, &carryon.User{ID: "usr_w", Name: "w", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
	}); err != nil || wsr.Replica() {
		t.Fatalf("a write with a marked context: err %v, replica %v", err, wsr.Replica())
	}

	poll.Eventually(t, "the lagging standby skipped and the primary answering", func() bool {
		got, replica := names(true)
		return !replica && slices.Contains(got, "b")
	})
	t.Logf("the paused standby was skipped %s after its replay paused (bound %s, from its last replayed commit)", time.Since(paused).Round(time.Millisecond), bound)

	pair.ResumeReplay()
	addUser("c") // a fresh commit to replay: its time is what the lag is measured from
	poll.Eventually(t, "the standby caught up serving again", func() bool {
		got, replica := names(true)
		return replica && slices.Contains(got, "c") && slices.Contains(got, "b")
	})

	pair.StopStandby()
	start = time.Now()
	if got, replica := names(true); replica || !slices.Contains(got, "c") {
		t.Fatalf("with the standby down: names %v, replica %v; want the primary's answer", got, replica)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a marked read with the standby down took %s", d)
	}
}

// TestReadReplicaOptions refuses a read replica that cannot be one before anything connects.
func TestReadReplicaOptions(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	if _, err := postgres.Open(t.Context(), dsn, postgres.WithReadReplica("postgres://x@127.0.0.1:1/db", -time.Second)); err == nil {
		t.Fatal("a negative lag bound was accepted")
	}
	if _, err := postgres.Open(t.Context(), dsn, postgres.WithReadReplica("postgres://x@[bad/db", time.Second)); err == nil {
		t.Fatal("an unparsable read dsn was accepted")
	}
	// A standby that is not there does not stop the start: the primary answers every read.
	db, err := postgres.Open(t.Context(), dsn, postgres.WithReadReplica("postgres://x@127.0.0.1:1/db", time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, sr := store.WithStaleRead(t.Context())
	if err := db.Read(ctx, func(tx store.Tx) error { _, err := tx.ListUsers(ctx); return err }); err != nil || sr.Replica() {
		t.Fatalf("with an unreachable replica: err %v, replica %v", err, sr.Replica())
	}
}
