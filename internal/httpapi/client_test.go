package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/client"
)

// wantCode checks that err is a *carryon.Error with code.
func wantCode(t *testing.T, err error, code string) *carryon.Error {
	t.Helper()
	e, ok := carryon.AsError(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	if e.Message == "" {
		t.Fatalf("err %v has no message", err)
	}
	return e
}

// The client speaks every session call of the core contract against the real server.
func TestClientSessionRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	cx := ctx(t)
	if err := c.Health(cx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(cx); err != nil {
		t.Fatal(err)
	}
	s, err := c.Create(cx, carryon.NewSession{Title: "trip", Metadata: json.RawMessage(`{"k":"v"}`), WorkingMemory: carryon.WorkingMemory{"goal": "g0"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || s.Title != "trip" || s.Status != carryon.SessionActive || string(s.Metadata) != `{"k":"v"}` {
		t.Fatalf("create: %+v", s)
	}
	res, err := c.AppendMessages(cx, s.ID, carryon.AppendInput{
		Messages:     []carryon.NewMessage{{Role: carryon.RoleUser, Content: "one"}, {Role: carryon.RoleAssistant, Content: "two"}},
		WriteOptions: carryon.WriteOptions{ExpectedVersion: carryon.Ptr(s.Version)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID != s.ID || len(res.Messages) != 2 || res.Messages[1].Seq != 2 || res.Messages[1].Content != "two" {
		t.Fatalf("append: %+v", res)
	}
	page, err := c.ListMessages(cx, s.ID, carryon.MessageFilter{AfterSeq: 1, Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Content != "two" {
		t.Fatalf("list messages: %+v %v", page, err)
	}
	st, err := c.PatchWorkingMemory(cx, s.ID, carryon.WorkingMemoryPatch{Patch: json.RawMessage(`{"goal":"g1","next_action":"n"}`), WriteOptions: carryon.WriteOptions{ExpectedVersion: carryon.Ptr(res.Version)}})
	if err != nil || st.WorkingMemory.Goal() != "g1" || st.WorkingMemory.NextAction() != "n" || st.Version != res.Version+1 {
		t.Fatalf("patch memory: %+v %v", st, err)
	}
	got, err := c.GetWorkingMemory(cx, s.ID)
	if err != nil || got.WorkingMemory.Goal() != "g1" || got.Version != st.Version {
		t.Fatalf("get memory: %+v %v", got, err)
	}
	hist, err := c.WorkingMemoryHistory(cx, s.ID, carryon.RevisionFilter{Limit: 10})
	if err != nil || len(hist.Items) == 0 {
		t.Fatalf("history: %+v %v", hist, err)
	}
	diff, err := c.WorkingMemoryDiff(cx, s.ID, 0, st.WorkingMemoryVersion)
	if err != nil || len(diff.Changes) == 0 {
		t.Fatalf("diff: %+v %v", diff, err)
	}
	view, err := c.Get(cx, s.ID, carryon.GetOptions{Messages: 1})
	if err != nil || len(view.Messages) != 1 || view.Messages[0].Seq != 2 || view.WorkingMemory.Goal() != "g1" || view.Version != st.Version {
		t.Fatalf("get: %+v %v", view, err)
	}
	if view, err = c.Get(cx, s.ID, carryon.GetOptions{Messages: -1}); err != nil || len(view.Messages) != 0 {
		t.Fatalf("get without messages: %+v %v", view, err)
	}
	up, err := c.Update(cx, s.ID, carryon.SessionUpdate{Title: carryon.Ptr("renamed")})
	if err != nil || up.Title != "renamed" {
		t.Fatalf("update: %+v %v", up, err)
	}
	list, err := c.List(cx, carryon.SessionFilter{Status: carryon.SessionActive, Limit: 10})
	if err != nil || len(list.Items) != 1 || list.Items[0].ID != s.ID {
		t.Fatalf("list: %+v %v", list, err)
	}
	fork, err := c.Fork(cx, s.ID, carryon.ForkInput{Title: "fork"})
	if err != nil || fork.ParentID != s.ID {
		t.Fatalf("fork: %+v %v", fork, err)
	}
	closed, err := c.Close(cx, s.ID, carryon.WriteOptions{})
	if err != nil || closed.Status != carryon.SessionClosed {
		t.Fatalf("close: %+v %v", closed, err)
	}
	_, err = c.AppendMessages(cx, s.ID, carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "x"}}})
	wantCode(t, err, carryon.ECLOSED)
	if r, err := c.Restore(cx, s.ID, carryon.WriteOptions{}); err != nil || r.Status != carryon.SessionActive {
		t.Fatalf("restore: %+v %v", r, err)
	}
	if err := c.Delete(cx, fork.ID, carryon.WriteOptions{ExpectedVersion: carryon.Ptr(fork.Version)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(cx, fork.ID, carryon.GetOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
	// Bob cannot see alice's session.
	_, err = e.client(e.bobKey).Get(cx, s.ID, carryon.GetOptions{})
	wantCode(t, err, carryon.ENOTFOUND)
}

// Conflicts and replays come back through the client as the services report them.
func TestClientConflictsAndReplays(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c := e.client(e.aliceKey)
	cx := ctx(t)
	s, err := c.Create(cx, carryon.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	in := carryon.AppendInput{Messages: []carryon.NewMessage{{Role: carryon.RoleUser, Content: "once"}}, WriteOptions: carryon.WriteOptions{RequestID: "req-1"}}
	var rec1, rec2 carryon.WriteReceipt
	first, err := c.AppendMessages(carryon.NewContextWithReceipt(cx, &rec1), s.ID, in)
	if err != nil || rec1.Replayed {
		t.Fatalf("first append: %v, replayed %v", err, rec1.Replayed)
	}
	second, err := c.AppendMessages(carryon.NewContextWithReceipt(cx, &rec2), s.ID, in)
	if err != nil || !rec2.Replayed {
		t.Fatalf("repeat: %v, replayed %v", err, rec2.Replayed)
	}
	if second.Version != first.Version || second.Messages[0].Seq != first.Messages[0].Seq {
		t.Fatalf("replay %+v differs from %+v", second, first)
	}
	in.Messages[0].Content = "changed"
	_, err = c.AppendMessages(cx, s.ID, in)
	wantCode(t, err, carryon.EKEYREUSED)

	_, err = c.AppendMessages(cx, s.ID, carryon.AppendInput{
		Messages:     []carryon.NewMessage{{Role: carryon.RoleUser, Content: "stale"}},
		WriteOptions: carryon.WriteOptions{ExpectedVersion: carryon.Ptr(s.Version)},
	})
	ce := wantCode(t, err, carryon.EVERSION)
	if ce.CurrentVersion != first.Version {
		t.Errorf("CurrentVersion = %d, want %d", ce.CurrentVersion, first.Version)
	}
	// Delete sends its version as If-Match, so a stale one is a 412 that maps to EVERSION too.
	err = c.Delete(cx, s.ID, carryon.WriteOptions{ExpectedVersion: carryon.Ptr(s.Version)})
	if ce := wantCode(t, err, carryon.EVERSION); ce.CurrentVersion != first.Version {
		t.Errorf("delete CurrentVersion = %d, want %d", ce.CurrentVersion, first.Version)
	}
	view, err := c.Get(cx, s.ID, carryon.GetOptions{})
	if err != nil || view.MessageCount != 1 {
		t.Fatalf("after conflicts: %+v %v", view, err)
	}
}

// The client manages users and keys through the admin routes and authenticates keys.
func TestClientUsersAndKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	admin := e.client(e.adminKey)
	cx := ctx(t)
	me, err := admin.Me(cx)
	if err != nil || me.Name != "admin" || !me.Admin {
		t.Fatalf("me: %+v %v", me, err)
	}
	u, secret, err := admin.CreateUser(cx, carryon.NewUser{Name: "carol"})
	if err != nil || u.Name != "carol" || secret == "" {
		t.Fatalf("create user: %+v %q %v", u, secret, err)
	}
	_, _, err = admin.CreateUser(cx, carryon.NewUser{Name: "carol"})
	wantCode(t, err, carryon.ECONFLICT)
	who, err := admin.Authenticate(cx, secret)
	if err != nil || who.ID != u.ID {
		t.Fatalf("authenticate: %+v %v", who, err)
	}
	list, err := admin.ListUsers(cx)
	if err != nil || len(list) != 4 {
		t.Fatalf("list users: %d %v", len(list), err)
	}
	k, secret2, err := admin.CreateKey(cx, "carol")
	if err != nil || k.UserID != u.ID || secret2 == "" || secret2 == secret {
		t.Fatalf("create key: %+v %v", k, err)
	}
	keys, err := admin.ListKeys(cx, u.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("list keys: %d %v", len(keys), err)
	}
	if err := admin.RevokeKey(cx, k.ID, carryon.RetryOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = admin.Authenticate(cx, secret2)
	wantCode(t, err, carryon.EUNAUTHORIZED)
	_, err = e.client(secret2).Me(cx)
	wantCode(t, err, carryon.EUNAUTHORIZED)
	if c, err := e.client(secret).Me(cx); err != nil || c.ID != u.ID {
		t.Fatalf("carol's first key: %+v %v", c, err)
	}
	_, err = e.client(secret).ListUsers(cx)
	wantCode(t, err, carryon.EFORBIDDEN)
	_, _, err = admin.CreateKey(cx, "nobody")
	wantCode(t, err, carryon.ENOTFOUND)
	// An admin looks a user up by name or by id; nobody else can.
	for _, ref := range []string{"carol", u.ID} {
		if got, err := admin.GetUser(cx, ref); err != nil || got.ID != u.ID || got.Name != "carol" {
			t.Fatalf("get user %s: %+v %v", ref, got, err)
		}
	}
	_, err = admin.GetUser(cx, "nobody")
	wantCode(t, err, carryon.ENOTFOUND)
	_, err = e.client(secret).GetUser(cx, "carol")
	wantCode(t, err, carryon.EFORBIDDEN)
}

// An answer without a problem body (a proxy's error page) still becomes a *carryon.Error.
func TestClientMapsForeignErrors(t *testing.T) {
	t.Parallel()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("<h1>down for maintenance</h1>"))
	}))
	defer proxy.Close()
	err := client.New(proxy.URL, "k").Health(ctx(t))
	e := wantCode(t, err, carryon.EUNAVAILABLE)
	if e.RetryAfterSeconds != 7 {
		t.Errorf("RetryAfterSeconds = %d, want 7", e.RetryAfterSeconds)
	}
	// A server that is not there is a transport error, not a carryon error.
	proxy.Close()
	err = client.New(proxy.URL, "k").Health(ctx(t))
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	var ce *carryon.Error
	if errors.As(err, &ce) {
		t.Errorf("transport failure became %v", ce)
	}
}
