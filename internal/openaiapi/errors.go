package openaiapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// errorBody is OpenAI's error envelope: {"error": {message, type, param, code}}.
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// paramError is an EINVALID about one request field, named in the envelope's param.
type paramError struct {
	param string
	err   *carryon.Error
}

func (e *paramError) Error() string { return e.err.Error() }
func (e *paramError) Unwrap() error { return e.err }

// invalidParam returns an EINVALID error naming param.
func invalidParam(param, format string, args ...any) error {
	return &paramError{param: param, err: carryon.Errorf(carryon.EINVALID, format, args...)}
}

// WriteError answers err in OpenAI's error envelope (httpapi calls it for a request it refuses
// before Handler, such as one without a valid key) with the status the native API gives its
// code. The SDKs retry 409 and 5xx by default: a version conflict or a reused idempotency key
// is sent with x-should-retry: false (retrying cannot succeed); a busy session with
// Retry-After. An If-Match that failed is 412, as on the native routes.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	code := carryon.ErrorCode(err)
	status := wire.StatusOf(code)
	if status == http.StatusInternalServerError {
		code = carryon.EINTERNAL
	}
	msg := carryon.ErrorMessage(err)
	if code == carryon.EINTERNAL {
		msg = "internal error"
	}
	if code == carryon.EVERSION && r.Header.Get("If-Match") != "" {
		status = http.StatusPreconditionFailed
	}
	body := errorBody{Error: errorObject{Message: msg, Type: errorType(status), Code: code}}
	var pe *paramError
	if errors.As(err, &pe) {
		body.Error.Param = &pe.param
	}
	switch code {
	case carryon.EVERSION, carryon.EKEYREUSED:
		w.Header().Set("x-should-retry", "false")
	case carryon.EBUSY, carryon.EINFLIGHT, carryon.ETOOMANY, carryon.EUNAVAILABLE:
		wire.SetRetryAfter(w.Header(), err)
	case carryon.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="carryon"`)
	}
	writeJSON(w, status, body)
}

// errorType is the envelope's type for a status, as OpenAI names them.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusConflict || status == http.StatusPreconditionFailed:
		return "conflict_error"
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"internal error","type":"server_error","param":null,"code":"internal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
