package longtermtool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/tool"
	"github.com/carryon-hub/carryon/internal/tool/longtermtool"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// remember and recall act for the session's owner only, and refuse a context of another user.
func TestRememberRecallForOwnerOnly(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, id := range []string{"usr_a", "usr_b"} {
		if err := db.Write(t.Context(), func(_ context.Context, tx store.Tx) error {
			return tx.InsertUser(t.Context(), &carryon.User{ID: id, Name: id, CreatedAt: time.Unix(1, 0).UTC()})
		}); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := tool.NewRegistry(longtermtool.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	mem := longterm.New(db, nil)
	call := func(ctx context.Context, name, owner, args string) (tool.Result, error) {
		return reg.Invoke(ctx, name, tool.Call{Args: json.RawMessage(args), OwnerID: owner, LongTerm: mem})
	}
	bg := context.Background()
	if _, err := call(bg, "remember", "usr_a", `{"namespace":"prefs","key":"editor","value":"vim","text":"prefers vim"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := call(bg, "remember", "usr_b", `{"key":"editor","value":"emacs","text":"prefers emacs"}`); err != nil {
		t.Fatal(err)
	}
	res, err := call(bg, "recall", "usr_a", `{"query":"which editor do I prefer"}`)
	if err != nil || !strings.Contains(res.Content, "vim") || strings.Contains(res.Content, "emacs") {
		t.Fatalf("recall as a: %q, %v", res.Content, err)
	}
	res, err = call(bg, "recall", "usr_b", `{"query":"","namespace":"notes"}`)
	if err != nil || !strings.Contains(res.Content, "emacs") || strings.Contains(res.Content, "vim") {
		t.Fatalf("recall as b: %q, %v", res.Content, err)
	}
	other := carryon.NewContextWithUser(bg, &carryon.User{ID: "usr_b"})
	if _, err := call(other, "recall", "usr_a", `{"query":"editor"}`); carryon.ErrorCode(err) != carryon.EFORBIDDEN {
		t.Fatalf("recall in another user's context: %v", err)
	}
	if _, err := reg.Invoke(bg, "recall", tool.Call{Args: json.RawMessage(`{"query":"x"}`), OwnerID: "usr_a"}); carryon.ErrorCode(err) != carryon.EUNAVAILABLE {
		t.Fatalf("recall without a memory service: %v", err)
	}
	if _, err := call(bg, "remember", "usr_a", `{"namespace":"Bad","key":"k","value":1}`); err == nil {
		t.Fatal("remember accepted a bad namespace")
	}
	// Without a key: the fact is added once per call (its idempotency key), and the same fact
	// from another call consolidates into it.
	keyed := func(key, args string) (tool.Result, error) {
		return reg.Invoke(bg, "remember", tool.Call{Args: json.RawMessage(args), OwnerID: "usr_a", LongTerm: mem, IdempotencyKey: key})
	}
	first, err := keyed("run_1/1/0", `{"namespace":"facts","text":"has a cat named Miso"}`)
	if err != nil || strings.Contains(first.Content, "consolidated_into") {
		t.Fatalf("first fact: %q, %v", first.Content, err)
	}
	if again, err := keyed("run_1/1/0", `{"namespace":"facts","text":"has a cat named Miso"}`); err != nil || again.Content != first.Content {
		t.Fatalf("the same call again: %q, %v", again.Content, err)
	}
	if dup, err := keyed("run_2/1/0", `{"namespace":"facts","text":"Has a cat named  Miso"}`); err != nil || !strings.Contains(dup.Content, "consolidated_into") {
		t.Fatalf("the same fact from another call: %q, %v", dup.Content, err)
	}
	if _, err := keyed("run_3/1/0", `{"namespace":"facts"}`); carryon.ErrorCode(err) != carryon.EINVALID {
		t.Fatalf("remember with neither key nor text: %v", err)
	}
}
