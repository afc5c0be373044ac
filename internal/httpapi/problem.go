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
	"github.com/carryon-hub/carryon/internal/wire"
)

// problemOf builds the problem document for err. Internal errors never show their message.
func problemOf(err error) wire.Problem {
	code := carryon.ErrorCode(err)
	if !wire.Known(code) {
		code = carryon.EINTERNAL
	}
	p := wire.Problem{
		Type:   wire.ProblemTypeBase + code,
		Title:  wire.TitleOf(code),
		Status: wire.StatusOf(code),
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
		p.Detail = p.Title + "."
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
			slog.String("http_request_id", w.Header().Get("X-Request-Id")), slog.Any("err", err))
	}
	wire.SetRetryAfter(w.Header(), err)
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
func writeProblem(w http.ResponseWriter, p wire.Problem) {
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
