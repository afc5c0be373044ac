package openaiapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/carryon-hub/carryon"
)

// Each code is answered with the native API's status in OpenAI's envelope, with the headers
// the SDKs read to decide whether to retry.
func TestWriteError(t *testing.T) {
	t.Parallel()
	busy := carryon.Errorf(carryon.EBUSY, "session is busy with run run_1")
	busy.RetryAfterSeconds = 3
	for _, c := range []struct {
		err            error
		ifMatch        bool
		status         int
		code, typ      string
		retry, noRetry string
		param          string
	}{
		{busy, false, http.StatusConflict, carryon.EBUSY, "conflict_error", "3", "", ""},
		{carryon.Errorf(carryon.EINFLIGHT, "in flight"), false, http.StatusConflict, carryon.EINFLIGHT, "conflict_error", "1", "", ""},
		{carryon.VersionConflict(1, 2), false, http.StatusConflict, carryon.EVERSION, "conflict_error", "", "false", ""},
		{carryon.VersionConflict(1, 2), true, http.StatusPreconditionFailed, carryon.EVERSION, "conflict_error", "", "false", ""},
		{carryon.Errorf(carryon.EKEYREUSED, "reused"), false, http.StatusUnprocessableEntity, carryon.EKEYREUSED, "invalid_request_error", "", "false", ""},
		{carryon.Errorf(carryon.ENOTFOUND, "no"), false, http.StatusNotFound, carryon.ENOTFOUND, "not_found_error", "", "", ""},
		{invalidParam("items[0].role", "bad role"), false, http.StatusBadRequest, carryon.EINVALID, "invalid_request_error", "", "", "items[0].role"},
		{json.Unmarshal([]byte("{"), &struct{}{}), false, http.StatusInternalServerError, carryon.EINTERNAL, "server_error", "", "", ""},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/conversations", nil)
		if c.ifMatch {
			r.Header.Set("If-Match", `"1"`)
		}
		WriteError(w, r, c.err)
		var body errorBody
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: body %s: %v", c.err, w.Body, err)
		}
		param := ""
		if body.Error.Param != nil {
			param = *body.Error.Param
		}
		if w.Code != c.status || body.Error.Code != c.code || body.Error.Type != c.typ || param != c.param || body.Error.Message == "" ||
			w.Header().Get("Retry-After") != c.retry || w.Header().Get("x-should-retry") != c.noRetry {
			t.Errorf("%v: %d %s (Retry-After %q, x-should-retry %q); want %d %s %s", c.err, w.Code, w.Body,
				w.Header().Get("Retry-After"), w.Header().Get("x-should-retry"), c.status, c.code, c.typ)
		}
	}
}
