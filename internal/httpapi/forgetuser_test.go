package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/carryon-hub/carryon"
)

// TestForgetUserRoute: DELETE /v1/users/{id} is for admins, answers the receipt (checked against
// the OpenAPI document like every answer), and afterwards the user, its sessions and its key are
// gone; an admin cannot forget itself, and a repeat is a 404.
func TestForgetUserRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	s := e.newSession("bob's")
	wantStatus(t, e.json("POST", "/v1/sessions/"+s.ID+"/messages", e.aliceKey, `{"messages":[{"role":"user","content":"hi"}]}`), http.StatusCreated)
	wantProblem(t, e.json("DELETE", "/v1/users/alice", e.bobKey, ""), http.StatusForbidden, carryon.EFORBIDDEN)
	wantProblem(t, e.json("DELETE", "/v1/users/admin", e.adminKey, ""), http.StatusBadRequest, carryon.EINVALID)
	a := e.json("DELETE", "/v1/users/alice", e.adminKey, "")
	wantStatus(t, a, http.StatusOK)
	r := decodeBody[carryon.ForgetReceipt](t, a)
	if r.Deleted.Sessions != 1 || r.Deleted.Messages != 1 || r.Deleted.Keys != 1 || r.UserID == "" {
		t.Fatalf("receipt = %s", a.body)
	}
	wantProblem(t, e.json("GET", "/v1/users/"+r.UserID, e.adminKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("DELETE", "/v1/users/"+r.UserID, e.adminKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
	wantProblem(t, e.json("GET", "/v1/sessions/"+s.ID, e.aliceKey, ""), http.StatusUnauthorized, carryon.EUNAUTHORIZED)
	wantProblem(t, e.json("GET", "/v1/sessions/"+s.ID, e.bobKey, ""), http.StatusNotFound, carryon.ENOTFOUND)
}
