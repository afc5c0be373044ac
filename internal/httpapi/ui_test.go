package httpapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon/internal/httpapi"
)

// TestUIMount: Config.UI is served at /ui/ and below without a key (it is the inspector's static
// app) and GET / redirects to it; without it, /ui/ and / are unknown paths like any other.
func TestUIMount(t *testing.T) {
	t.Parallel()
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ui "+r.URL.Path) })
	e := newEnv(t, func(c *httpapi.Config) { c.UI = ui })
	get := func(e *env, path string) (int, string) {
		t.Helper()
		res, err := e.srv.Client().Get(e.srv.URL + path) // not the checked client: /ui/ is not in the OpenAPI document
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, path := range []string{"/ui/", "/ui/app.js"} {
		if status, body := get(e, path); status != 200 || body != "ui "+path {
			t.Fatalf("GET %s = %d %q", path, status, body)
		}
	}
	res, err := e.srv.Client().Get(e.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/ui/" || res.StatusCode != 200 {
		t.Fatalf("GET / ended at %s with %d, want /ui/", res.Request.URL, res.StatusCode)
	}
	if status, _ := get(e, "/v1/me"); status != http.StatusUnauthorized {
		t.Fatalf("GET /v1/me without a key = %d: the UI mount must not open the API", status)
	}
	plain := newEnv(t, nil)
	if status, _ := get(plain, "/ui/"); status != http.StatusNotFound {
		t.Fatalf("without Config.UI, GET /ui/ = %d, want 404", status)
	}
	if status, _ := get(plain, "/"); status != http.StatusNotFound {
		t.Fatalf("without Config.UI, GET / = %d, want 404", status)
	}
}
