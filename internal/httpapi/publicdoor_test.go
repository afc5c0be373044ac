package httpapi_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/httpapi"
)

// publicDoor is a front door with public paths: it answers who called it ("nobody" without a
// user in the context), and refuses with status 418 so that its own refusals are told apart.
type publicDoor struct{}

func (publicDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	who := "nobody"
	if u := carryon.UserFromContext(r.Context()); u != nil {
		who = u.Name
	}
	io.WriteString(w, who+" at "+r.URL.Path)
}

func (publicDoor) Prefixes() []string    { return []string{"/ext"} }
func (publicDoor) Door() carryon.Door    { return carryon.DoorAPI }
func (publicDoor) PublicPaths() []string { return []string{"/.well-known/ext.json", "/ext/card"} }
func (publicDoor) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	w.WriteHeader(http.StatusTeapot)
	io.WriteString(w, carryon.ErrorCode(err))
}

var _ httpapi.PublicDoor = publicDoor{}

// TestPublicDoorPaths: a door's public paths reach it without a key (and with no user in the
// context), also one below its prefix; every other path of the door still needs the key, refused
// through the door's WriteError, and with the key it gets the user; a path below a public one is
// not public.
func TestPublicDoorPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *httpapi.Config) { c.Doors = []httpapi.FrontDoor{publicDoor{}} })
	get := func(path, key string) (int, string) {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, c := range []struct {
		path, key string
		status    int
		body      string
	}{
		{"/.well-known/ext.json", "", 200, "nobody at /.well-known/ext.json"},
		{"/ext/card", "", 200, "nobody at /ext/card"},
		{"/ext/card/more", "", http.StatusTeapot, carryon.EUNAUTHORIZED},
		{"/ext/other", "", http.StatusTeapot, carryon.EUNAUTHORIZED},
		{"/ext", "", http.StatusTeapot, carryon.EUNAUTHORIZED},
		{"/ext/other", e.aliceKey, 200, "alice at /ext/other"},
	} {
		if status, body := get(c.path, c.key); status != c.status || body != c.body {
			t.Errorf("GET %s (key %v) = %d %q, want %d %q", c.path, c.key != "", status, body, c.status, c.body)
		}
	}
}
