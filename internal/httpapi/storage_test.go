package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
	"github.com/carryon-hub/carryon/internal/sessions"
	"github.com/carryon-hub/carryon/store/sqlite"
)

// GET /v1/sessions/{id}/storage answers the owner the rows and bytes of the session by kind, its
// workspace files included, with totals that are the kinds' sums; another user and a missing
// session get 404, and a write through the route is refused.
func TestSessionStorage(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "carryon.db"))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	e := newEnvOn(t, db, func(c *httpapi.Config) {
		c.Storage = sessions.New(db, sessions.Config{Workspaces: ws}).Storage
	})
	s := e.newSession("measured")
	path := "/v1/sessions/" + s.ID
	wantStatus(t, e.json("POST", path+"/messages", e.aliceKey, `{"messages":[
		{"role":"user","content":"hello there"},{"role":"assistant","content":"hi"}]}`), http.StatusCreated)
	if err := os.MkdirAll(filepath.Join(ws, s.ID, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"notes.txt": "hello", "sub/plan.md": "# plan\n"} {
		if err := os.WriteFile(filepath.Join(ws, s.ID, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	a := e.json("GET", path+"/storage", e.aliceKey, "")
	wantStatus(t, a, http.StatusOK)
	got := decodeBody[carryon.SessionStorage](t, a)
	if got.SessionID != s.ID || len(got.Kinds) != 9 {
		t.Fatalf("storage = %+v; want 9 kinds of %s", got, s.ID)
	}
	by := map[string]carryon.StorageUse{}
	var rows, bytes int64
	for _, k := range got.Kinds {
		by[k.Kind] = k
		rows += k.Rows
		bytes += k.Bytes
	}
	if m := by[carryon.StorageMessages]; m.Rows != 2 || m.Bytes != int64(len("hello there")+len("hi")) {
		t.Fatalf("messages = %+v", m)
	}
	if f := by[carryon.StorageWorkspaceFiles]; f.Rows != 2 || f.Bytes != int64(len("hello")+len("# plan\n")) {
		t.Fatalf("workspace files = %+v", f)
	}
	if x := by[carryon.StorageSearchIndex]; x.Rows != 2 || x.Bytes <= 0 {
		t.Fatalf("search index = %+v", x)
	}
	if got.Kinds[len(got.Kinds)-1].Kind != carryon.StorageWorkspaceFiles || got.Rows != rows || got.Bytes != bytes {
		t.Fatalf("storage = %+v; want workspace files last and totals %d rows, %d bytes", got, rows, bytes)
	}

	// The Go client reads the same.
	viaClient, err := e.client(e.aliceKey).Storage(ctx(t), s.ID)
	if err != nil || viaClient.Rows != got.Rows || viaClient.Bytes != got.Bytes || len(viaClient.Kinds) != len(got.Kinds) {
		t.Fatalf("client Storage = %+v, %v; want %+v", viaClient, err, got)
	}
	if _, err := e.client(e.bobKey).Storage(ctx(t), s.ID); carryon.ErrorCode(err) != carryon.ENOTFOUND {
		t.Fatalf("bob's client Storage: %v, want not found", err)
	}

	wantProblem(t, e.json("GET", path+"/storage", e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("GET", "/v1/sessions/sess_missing/storage", e.aliceKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	if a := e.json("POST", path+"/storage", e.aliceKey, "{}"); a.status != http.StatusMethodNotAllowed {
		t.Fatalf("POST storage: status %d, want 405; body %s", a.status, a.body)
	}
}
