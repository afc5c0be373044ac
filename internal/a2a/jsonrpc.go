package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
	"github.com/carryon-hub/carryon/internal/wire"
)

// JSON-RPC 2.0's error codes, and A2A's (section "Error handling" of the specification).
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternal         = -32603
	codeTaskNotFound     = -32001
	codeNotCancelable    = -32002
	codePushNotSupported = -32003
	codeUnsupported      = -32004
	codeContentType      = -32005
)

// rpcError is an error a method answers with a JSON-RPC code of its own.
type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

// rpcErr returns an rpcError with code.
func rpcErr(code int, format string, args ...any) error {
	return &rpcError{code: code, msg: fmt.Sprintf(format, args...)}
}

// request is a JSON-RPC request object.
type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// errorObject is JSON-RPC's error member; data carries carryon's error code.
type errorObject struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// response is a JSON-RPC response object: a result or an error, with the request's id.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *errorObject    `json:"error,omitempty"`
}

// errorOf is err as a JSON-RPC error: an rpcError as it is, a carryon error by its code
// (ENOTFOUND is A2A's task-not-found, EINVALID invalid params), anything else internal.
func errorOf(err error) *errorObject {
	var re *rpcError
	if errors.As(err, &re) {
		return &errorObject{Code: re.code, Message: re.msg}
	}
	var ge *jsongate.Error
	if errors.As(err, &ge) {
		return &errorObject{Code: codeInvalidParams, Message: "params: " + ge.Error()}
	}
	code := carryon.ErrorCode(err)
	msg := carryon.ErrorMessage(err)
	out := &errorObject{Code: codeInternal, Message: msg, Data: map[string]any{"carryon_code": code}}
	switch code {
	case carryon.ENOTFOUND:
		out.Code = codeTaskNotFound
	case carryon.EINVALID, carryon.ETOOLARGE, carryon.EKEYREUSED:
		out.Code = codeInvalidParams
	case carryon.EBUSY, carryon.ECONFLICT, carryon.ECLOSED, carryon.EEXPIRED, carryon.EVERSION:
		out.Code = codeUnsupported
	case carryon.ENOTIMPLEMENTED, carryon.EQUOTA:
		out.Code = codeUnsupported
	}
	if code != carryon.EUNAVAILABLE && code != carryon.EQUOTA && wire.StatusOf(code) >= 500 {
		out.Code, out.Message, out.Data = codeInternal, "internal error", map[string]any{"carryon_code": carryon.EINTERNAL}
	}
	return out
}

// errorStatus is the HTTP status of a JSON-RPC error answer: 200, as JSON-RPC over HTTP has it,
// except when the server or its database is unavailable, which is 503 with Retry-After so that
// HTTP clients and load balancers retry it like any other door's.
func errorStatus(w http.ResponseWriter, err error) int {
	if carryon.ErrorCode(err) == carryon.EUNAVAILABLE {
		wire.SetRetryAfter(w.Header(), err)
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

// writeRefusal answers a request the door refuses as a whole (no key, a path it does not serve,
// a body too large) as a JSON-RPC error with no id; the HTTP status is status when given,
// else the one the native API gives the error's code.
func writeRefusal(w http.ResponseWriter, err error, status ...int) {
	code := carryon.ErrorCode(err)
	st := wire.StatusOf(code)
	if len(status) > 0 {
		st = status[0]
	}
	e := errorOf(err)
	switch code {
	case carryon.EUNAUTHORIZED:
		w.Header().Set("WWW-Authenticate", `Bearer realm="carryon"`)
		e.Code = codeInvalidRequest
	case carryon.ETOOLARGE, carryon.ETIMEOUT, carryon.ETOOMANY, carryon.EINFLIGHT, carryon.EBUSY:
		e.Code = codeInvalidRequest
		wire.SetRetryAfter(w.Header(), err)
	case carryon.ENOTFOUND:
		e.Code = codeMethodNotFound
	}
	if st == http.StatusMethodNotAllowed {
		e.Code = codeInvalidRequest
	}
	writeJSON(w, st, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: e})
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// readRequest reads and checks a JSON-RPC request through the input gate; a refusal is the
// JSON-RPC error to answer, with the id when one could be read.
func (h *Handler) readRequest(w http.ResponseWriter, r *http.Request) (*request, json.RawMessage, *errorObject, int) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, &errorObject{Code: codeInvalidRequest, Message: fmt.Sprintf("the request body is larger than %d bytes", tooLarge.Limit)}, http.StatusRequestEntityTooLarge
		}
		if ce, ok := carryon.AsError(err); ok {
			return nil, nil, &errorObject{Code: codeInvalidRequest, Message: ce.Message}, wire.StatusOf(ce.Code)
		}
		return nil, nil, &errorObject{Code: codeInvalidRequest, Message: "the request body could not be read"}, http.StatusBadRequest
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	t := bytes.TrimSpace(b)
	switch {
	case len(t) == 0:
		return nil, nil, &errorObject{Code: codeInvalidRequest, Message: "the request needs a JSON-RPC request object as its body"}, http.StatusOK
	case !json.Valid(t):
		return nil, nil, &errorObject{Code: codeParseError, Message: "the body is not valid JSON"}, http.StatusOK
	case t[0] == '[':
		return nil, nil, &errorObject{Code: codeInvalidRequest, Message: "batch requests are not supported: send one request object per HTTP request"}, http.StatusOK
	case t[0] != '{':
		return nil, nil, &errorObject{Code: codeInvalidRequest, Message: "a JSON-RPC request is an object"}, http.StatusOK
	}
	var req request
	if err := jsongate.Decode(t, &req); err != nil {
		var loose struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(t, &loose)
		code := codeInvalidRequest
		var ge *jsongate.Error
		if errors.As(err, &ge) && (ge.Path == "params" || strings.HasPrefix(ge.Path, "params.") || strings.HasPrefix(ge.Path, "params[")) {
			code = codeInvalidParams // the envelope is sound; what is wrong is inside params
		}
		return nil, idOrNull(loose.ID), &errorObject{Code: code, Message: "request: " + err.Error()}, http.StatusOK
	}
	id := idOrNull(req.ID)
	switch {
	case req.JSONRPC != "2.0":
		return nil, id, &errorObject{Code: codeInvalidRequest, Message: `jsonrpc must be "2.0"`}, http.StatusOK
	case !validID(req.ID):
		return nil, id, &errorObject{Code: codeInvalidRequest, Message: "id must be a string or a number: every A2A method answers, so notifications are not taken"}, http.StatusOK
	case req.Method == "":
		return nil, id, &errorObject{Code: codeInvalidRequest, Message: "method is required"}, http.StatusOK
	}
	return &req, id, nil, http.StatusOK
}

// idOrNull is a request's id to echo: null when it is absent or not a string or number.
func idOrNull(id json.RawMessage) json.RawMessage {
	if !validID(id) {
		return json.RawMessage("null")
	}
	return id
}

// validID reports whether id is a JSON string or number.
func validID(id json.RawMessage) bool {
	t := bytes.TrimSpace(id)
	if len(t) == 0 {
		return false
	}
	return t[0] == '"' || t[0] == '-' || (t[0] >= '0' && t[0] <= '9')
}

// decodeParams decodes a method's params through the input gate; absent params are refused.
func decodeParams(raw json.RawMessage, v any) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return rpcErr(codeInvalidParams, "params are required")
	}
	if t[0] != '{' {
		return rpcErr(codeInvalidParams, "params must be an object")
	}
	return jsongate.Decode(t, v)
}
