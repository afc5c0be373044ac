package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/carryon-hub/carryon"
)

// ProblemTypeBase is the prefix of the `type` URI of every problem answer; the code follows it.
const ProblemTypeBase = "https://github.com/carryon-hub/carryon/blob/main/docs/API.md#"

// Problem is an RFC 9457 problem details document, the body of every error answer. Code is the
// carryon error code (see carryon.E* constants); the last fields carry recovery hints.
type Problem struct {
	Type           string `json:"type"`
	Title          string `json:"title"`
	Status         int    `json:"status"`
	Detail         string `json:"detail"`
	Code           string `json:"code"`
	Instance       string `json:"instance,omitempty"`
	CurrentVersion *int64 `json:"current_version,omitempty"`
	ActiveRunID    string `json:"active_run_id,omitempty"`
}

// codeInfo is the one code→status map of the HTTP API.
var codeInfo = map[string]struct {
	status int
	title  string
}{
	carryon.EINVALID:        {http.StatusBadRequest, "Invalid request"},
	carryon.EUNAUTHORIZED:   {http.StatusUnauthorized, "Unauthorized"},
	carryon.EFORBIDDEN:      {http.StatusForbidden, "Forbidden"},
	carryon.ENOTFOUND:       {http.StatusNotFound, "Not found"},
	carryon.EVERSION:        {http.StatusConflict, "Version conflict"},
	carryon.EINFLIGHT:       {http.StatusConflict, "Request in flight"},
	carryon.EKEYREUSED:      {http.StatusUnprocessableEntity, "Idempotency key reused"},
	carryon.EBUSY:           {http.StatusConflict, "Session busy"},
	carryon.ECLOSED:         {http.StatusConflict, "Session closed"},
	carryon.EEXPIRED:        {http.StatusGone, "Session expired"},
	carryon.ECONFLICT:       {http.StatusConflict, "Conflict"},
	carryon.EFENCED:         {http.StatusConflict, "Run fenced"},
	carryon.EVERSIONNEEDED:  {http.StatusPreconditionRequired, "Version required"},
	carryon.ETOOLARGE:       {http.StatusRequestEntityTooLarge, "Payload too large"},
	carryon.ETOOMANY:        {http.StatusTooManyRequests, "Too many requests"},
	carryon.ETIMEOUT:        {http.StatusRequestTimeout, "Request timeout"},
	carryon.EUNSUPPORTED:    {http.StatusUnsupportedMediaType, "Unsupported media type"},
	carryon.EINTERNAL:       {http.StatusInternalServerError, "Internal error"},
	carryon.EUNAVAILABLE:    {http.StatusServiceUnavailable, "Service unavailable"},
	carryon.ENOTIMPLEMENTED: {http.StatusNotImplemented, "Not implemented"},
}

// StatusOf returns the HTTP status of an error code; unknown codes are internal errors (500).
func StatusOf(code string) int {
	if ci, ok := codeInfo[code]; ok {
		return ci.status
	}
	return http.StatusInternalServerError
}

// codeOfStatus maps an HTTP status back to an error code, for answers that carry no problem body
// (a proxy's 502, say). It picks the code whose status matches, preferring the generic ones.
func codeOfStatus(status int) string {
	switch status {
	case http.StatusConflict:
		return carryon.ECONFLICT
	case http.StatusPreconditionFailed:
		return carryon.EVERSION
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return carryon.EUNAVAILABLE
	}
	for code, ci := range codeInfo {
		if ci.status == status {
			return code
		}
	}
	if status >= 500 {
		return carryon.EINTERNAL
	}
	return carryon.EINVALID
}

// problemOf builds the problem document for err. Internal errors never show their message.
func problemOf(err error) Problem {
	code := carryon.ErrorCode(err)
	ci, ok := codeInfo[code]
	if !ok {
		code = carryon.EINTERNAL
		ci = codeInfo[code]
	}
	p := Problem{
		Type:   ProblemTypeBase + code,
		Title:  ci.title,
		Status: ci.status,
		Detail: carryon.ErrorMessage(err),
		Code:   code,
	}
	if e, ok := carryon.AsError(err); ok && code != carryon.EINTERNAL {
		if code == carryon.EVERSION {
			p.CurrentVersion = carryon.Ptr(e.CurrentVersion)
		}
		p.ActiveRunID = e.ActiveRunID
	} else {
		p.Detail = "Internal error."
	}
	if p.Detail == "" {
		p.Detail = ci.title + "."
	}
	return p
}

// writeError answers with the problem document for err. fromIfMatch turns a version conflict into
// 412 Precondition Failed (the expected version came from an If-Match header). Internal errors are
// logged with the request; their details never reach the client.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if clientGone(r, err) {
		// Nobody is left to read an answer, and nothing failed on this side: the request's log
		// line and metrics say 499 (client closed request), and no internal error is logged.
		w.WriteHeader(StatusClientClosed)
		return
	}
	p := problemOf(err)
	p.Instance = r.URL.Path
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.code = p.Code
	}
	if p.Code == carryon.EVERSION && ifMatchUsed(r) {
		p.Status = http.StatusPreconditionFailed
		p.Title = "Precondition failed"
	}
	if p.Code == carryon.EINTERNAL {
		s.logger.ErrorContext(r.Context(), "internal error",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("request_id", w.Header().Get("X-Request-Id")), slog.Any("err", err))
	}
	if e, ok := carryon.AsError(err); ok && e.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	} else if p.Code == carryon.EINFLIGHT {
		w.Header().Set("Retry-After", "1")
	}
	if p.Code == carryon.ETIMEOUT {
		w.Header().Set("Connection", "close") // the rest of the body may still be on its way
	}
	if p.Code == carryon.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="carryon"`)
	}
	writeProblem(w, p)
}

// StatusClientClosed is the status a request's log line and metrics record when its client went
// away before the answer (nginx's 499 "client closed request"); no client ever receives it.
const StatusClientClosed = 499

// clientGone reports whether err is only the consequence of the client leaving: the request's
// context was cancelled (net/http does that when the connection closes) and err is no
// application error with something to say. Drivers report such an interrupted query in their
// own words, so the context decides, not the error.
func clientGone(r *http.Request, err error) bool {
	if _, ok := carryon.AsError(err); ok && carryon.ErrorCode(err) != carryon.EINTERNAL {
		return false
	}
	return errors.Is(r.Context().Err(), context.Canceled)
}

// writeProblem encodes p as application/problem+json.
func writeProblem(w http.ResponseWriter, p Problem) {
	body, _ := json.Marshal(p)
	h := w.Header()
	h.Del("ETag")
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}

// writeJSON encodes v as the answer with the given status. The encoding depends only on v, so the
// replay of a request is byte-identical to its first answer.
func (s *server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
