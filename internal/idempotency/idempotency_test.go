package idempotency_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/idempotency"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// memStore opens an in-memory SQLite store, closed when the test ends.
func memStore(t *testing.T) *sqlite.DB {
	t.Helper()
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// The rule on a real store: the first write runs and stores its answer; a repeat answers it and
// runs nothing; another request with the id is EKEYREUSED; an error stores nothing; Replace
// changes the answer of the same request only.
func TestWriteAndReplace(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	req := idempotency.Request{Owner: "usr_a", ID: "k", Op: "op", Target: "t", Input: map[string]int{"n": 1}, Now: now, TTL: time.Hour}
	runs := 0
	write := func(ctx context.Context, r idempotency.Request, fail bool) (string, error) {
		return idempotency.Write(ctx, st, r, func(tx store.Tx) (string, error) {
			runs++
			if fail {
				return "", carryon.Errorf(carryon.EINVALID, "no")
			}
			return "answer", nil
		})
	}
	if _, err := write(context.Background(), req, true); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("failing write: %v", err)
	}
	var rec carryon.WriteReceipt
	ctx := carryon.NewContextWithReceipt(context.Background(), &rec)
	if out, err := write(ctx, req, false); err != nil || out != "answer" || rec.Replayed {
		t.Fatalf("first write after a failed one: %q %v (replayed %v)", out, err, rec.Replayed)
	}
	if out, err := write(ctx, req, false); err != nil || out != "answer" || !rec.Replayed || runs != 2 {
		t.Fatalf("repeat: %q %v (replayed %v, %d runs)", out, err, rec.Replayed, runs)
	}
	other := req
	other.Input = map[string]int{"n": 2}
	if _, err := write(ctx, other, false); carryon.ErrorCode(err) != carryon.EKEYREUSED || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("another request with the id: %v", err)
	}
	if err := idempotency.Replace(context.Background(), st, other, "not mine"); err != nil {
		t.Fatal(err)
	}
	if err := idempotency.Replace(context.Background(), st, req, "final"); err != nil {
		t.Fatal(err)
	}
	if out, err := write(ctx, req, false); err != nil || out != "final" || runs != 2 {
		t.Fatalf("repeat after Replace: %q %v (%d runs)", out, err, runs)
	}
	anonymous := req
	anonymous.Owner = ""
	if _, err := write(ctx, anonymous, false); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("a request id without a caller: %v", err)
	}
	for _, id := range []string{strings.Repeat("x", carryon.MaxRequestIDLength+1), "a\nb", "\xff"} {
		if err := idempotency.CheckID(id); carryon.ErrorCode(err) != carryon.EINVALID {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
	if err := idempotency.CheckID(strings.Repeat("x", carryon.MaxRequestIDLength)); err != nil {
		t.Errorf("a %d-byte id: %v", carryon.MaxRequestIDLength, err)
	}
}

// A request with Ref keeps a reference and a repeat answers what Resolve reads from it; a record
// stored as JSON (before its operation kept references) still answers with Resolve set; a
// reference that nothing resolves is an internal error, not a wrong answer.
func TestReferenceAnswers(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	plain := idempotency.Request{Owner: "usr_a", ID: "old", Op: "op", Target: "t", Input: 1, Now: now, TTL: time.Hour}
	byRef := plain
	byRef.ID = "new"
	byRef.Ref = func(out any) ([]byte, error) { return []byte(strings.ToUpper(out.(string))), nil }
	byRef.Resolve = func(_ context.Context, _ store.Tx, ref []byte) (any, error) { return "resolved " + string(ref), nil }
	write := func(r idempotency.Request) (string, error) {
		return idempotency.Write(context.Background(), st, r, func(tx store.Tx) (string, error) { return "answer", nil })
	}
	if out, err := write(plain); err != nil || out != "answer" {
		t.Fatalf("plain: %q %v", out, err)
	}
	if out, err := write(byRef); err != nil || out != "answer" {
		t.Fatalf("by reference: %q %v", out, err)
	}
	if out, err := write(byRef); err != nil || out != "resolved ANSWER" {
		t.Fatalf("repeat by reference: %q %v", out, err)
	}
	old := plain
	old.Ref, old.Resolve = byRef.Ref, byRef.Resolve
	if out, err := write(old); err != nil || out != "answer" {
		t.Fatalf("repeat of a JSON record with Resolve set: %q %v", out, err)
	}
	unresolved := byRef
	unresolved.Resolve = nil
	if out, err := write(unresolved); carryon.ErrorCode(err) != carryon.EINTERNAL {
		t.Fatalf("a reference nothing resolves: %q %v", out, err)
	}
}

// unencodable is an input whose encoding fails and counts its attempts: the fingerprint of a
// request is the hash of its encoded input.
type unencodable struct{ tries *int }

func (u unencodable) MarshalJSON() ([]byte, error) {
	*u.tries++
	return nil, carryon.Errorf(carryon.EINTERNAL, "not encodable")
}

// TestNoFingerprintWithoutAnID: a write without a request id neither encodes nor hashes its
// input (there is no record to compare it with); with an id it does. (On 9e1964c every write
// encoded and hashed its whole input, messages included.)
func TestNoFingerprintWithoutAnID(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	tries := 0
	req := idempotency.Request{Owner: "usr_a", Op: "op", Target: "t", Input: unencodable{&tries}, Now: time.Now().UTC(), TTL: time.Hour}
	fn := func(tx store.Tx) (string, error) { return "answer", nil }
	if out, err := idempotency.Write(context.Background(), st, req, fn); err != nil || out != "answer" || tries != 0 {
		t.Fatalf("without an id: %q %v, the input encoded %d times", out, err, tries)
	}
	req.ID = "k"
	if _, err := idempotency.Write(context.Background(), st, req, fn); err == nil || tries == 0 {
		t.Fatalf("with an id: %v, the input encoded %d times", err, tries)
	}
}

// Used tells a kept record from none: unknown, another owner's, expired, and after a failed write
// (an error stores nothing) are unused; an answered request is used, with its session; an id no
// write would take is EINVALID.
func TestUsed(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	used := func(owner, id string, at time.Time) (string, bool, error) {
		var session string
		var ok bool
		err := st.Read(context.Background(), func(tx store.Tx) error {
			var err error
			session, ok, err = idempotency.Used(context.Background(), tx, owner, id, at)
			return err
		})
		return session, ok, err
	}
	req := idempotency.Request{Owner: "usr_a", ID: "k", Op: "op", Target: "sess_t", Input: 1, Now: now, TTL: time.Hour,
		Session: func(any) string { return "sess_t" }}
	if _, err := idempotency.Write(context.Background(), st, req, func(store.Tx) (int, error) {
		return 0, carryon.Errorf(carryon.EINVALID, "no")
	}); err == nil {
		t.Fatal("the failing write succeeded")
	}
	if _, ok, err := used("usr_a", "k", now); ok || err != nil {
		t.Fatalf("after a failed write: used %v, %v", ok, err)
	}
	if _, err := idempotency.Write(context.Background(), st, req, func(store.Tx) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if s, ok, err := used("usr_a", "k", now); !ok || s != "sess_t" || err != nil {
		t.Fatalf("after the write: %q, used %v, %v", s, ok, err)
	}
	for _, c := range []struct {
		owner, id string
		at        time.Time
	}{{"usr_a", "other", now}, {"usr_b", "k", now}, {"usr_a", "k", now.Add(time.Hour)}, {"usr_a", "", now}} {
		if _, ok, err := used(c.owner, c.id, c.at); ok || err != nil {
			t.Errorf("%+v: used %v, %v", c, ok, err)
		}
	}
	if _, _, err := used("usr_a", "a\nb", now); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Errorf("a request id with a control character: %v", err)
	}
}
