package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestSessionExternalID: POST /v1/sessions with an external id makes the session (201) once; a
// repeat answers it with 200 and stores nothing, if_exists error answers 409, GET ?external_id=
// finds it, and another user's key neither finds nor reuses it. The Go client says the same.
func TestSessionExternalID(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	a := e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"adk","external_id":"app/s-1"}`)
	wantStatus(t, a, http.StatusCreated)
	made := decodeBody[carryon.Session](t, a)
	if made.ExternalID != "app/s-1" || a.header.Get("Location") != "/v1/sessions/"+made.ID {
		t.Fatalf("created %+v at %q; want external_id app/s-1 and its Location", made, a.header.Get("Location"))
	}
	a = e.json("POST", "/v1/sessions", e.aliceKey, `{"title":"again","external_id":"app/s-1"}`)
	wantStatus(t, a, http.StatusOK)
	if got := decodeBody[carryon.Session](t, a); got.ID != made.ID || got.Title != "adk" || got.Version != made.Version {
		t.Fatalf("repeat = %+v; want %+v unchanged", got, made)
	}
	a = e.json("POST", "/v1/sessions", e.aliceKey, `{"external_id":"app/s-1","if_exists":"error"}`)
	wantProblem(t, a, http.StatusConflict, carryon.ECONFLICT)
	a = e.json("POST", "/v1/sessions", e.aliceKey, `{"external_id":"app/s-2","if_exists":"replace"}`)
	wantProblem(t, a, http.StatusBadRequest, carryon.EINVALID)

	a = e.json("GET", "/v1/sessions?external_id=app%2Fs-1", e.aliceKey, "")
	wantStatus(t, a, http.StatusOK)
	if page := decodeBody[carryon.SessionPage](t, a); len(page.Items) != 1 || page.Items[0].ID != made.ID {
		t.Fatalf("GET ?external_id = %s; want the session", a.body)
	}
	a = e.json("GET", "/v1/sessions?external_id=app%2Fs-1", e.bobKey, "")
	wantStatus(t, a, http.StatusOK)
	if page := decodeBody[carryon.SessionPage](t, a); len(page.Items) != 0 {
		t.Fatalf("bob's GET ?external_id = %s; want nothing", a.body)
	}
	a = e.json("POST", "/v1/sessions", e.bobKey, `{"external_id":"app/s-1","if_exists":"error"}`)
	wantStatus(t, a, http.StatusCreated)
	if bobs := decodeBody[carryon.Session](t, a); bobs.ID == made.ID {
		t.Fatal("bob's create answered alice's session")
	}

	c := e.client(e.aliceKey)
	rec := &carryon.WriteReceipt{}
	got, err := c.Create(carryon.NewContextWithReceipt(ctx(t), rec), carryon.NewSession{ExternalID: "app/s-1"})
	if err != nil || got.ID != made.ID || !rec.Existing {
		t.Fatalf("client repeat = %+v, %v (existing %v); want the session, existing", got, err, rec.Existing)
	}
	rec = &carryon.WriteReceipt{}
	fresh, err := c.Create(carryon.NewContextWithReceipt(ctx(t), rec), carryon.NewSession{ExternalID: "app/s-3"})
	if err != nil || fresh.ID == made.ID || rec.Existing {
		t.Fatalf("client create = %+v, %v (existing %v); want a new session", fresh, err, rec.Existing)
	}
	_, err = c.Create(ctx(t), carryon.NewSession{ExternalID: "app/s-3", IfExists: carryon.IfExistsError})
	if carryon.ErrorCode(err) != carryon.ECONFLICT {
		t.Fatalf("client if_exists error = %v; want ECONFLICT", err)
	}
	page, err := c.List(ctx(t), carryon.SessionFilter{ExternalID: "app/s-3"})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != fresh.ID {
		t.Fatalf("client List = %+v, %v; want the session", page, err)
	}
}
