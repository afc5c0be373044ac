package agui

import (
	"encoding/json"
	"net/http"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// errorBody is the door's refusal before a stream began: {"error": {code, message}}, with the
// status and code the native API gives the error (docs/API.md). AG-UI defines no HTTP error
// shape (HttpAgent reports the status and this body as they are); once the stream began, an
// error is a RUN_ERROR event with the same code and message.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers err as an errorBody; an internal error is worded "internal error".
func writeError(w http.ResponseWriter, err error) {
	code, msg := codeMessage(err)
	status := wire.StatusOf(code)
	switch code {
	case carryon.EBUSY, carryon.EINFLIGHT, carryon.ETOOMANY, carryon.EUNAVAILABLE:
		wire.SetRetryAfter(w.Header(), err)
	case carryon.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="carryon"`)
	}
	writeJSON(w, status, errorBody{Error: errorObject{Code: code, Message: msg}})
}

// codeMessage is err's carryon code and the sentence a client may see.
func codeMessage(err error) (string, string) {
	code := carryon.ErrorCode(err)
	if code == "" || wire.StatusOf(code) == http.StatusInternalServerError {
		return carryon.EINTERNAL, "internal error"
	}
	return code, carryon.ErrorMessage(err)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
