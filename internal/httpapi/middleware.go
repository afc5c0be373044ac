package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
	"github.com/carryon-hub/carryon/internal/telemetry"
	"github.com/carryon-hub/carryon/internal/wire"
)

// requestInfo is what the inner layers of a request tell the outer ones (for the log line).
type requestInfo struct {
	userID string
	code   string // the problem's error code, when the answer is one
}

type requestInfoKey struct{}

// statusWriter records the status of an answer. Unwrap lets http.ResponseController reach the
// connection (streaming answers need it).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap returns the underlying ResponseWriter.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// probes are the routes a monitoring system calls every few seconds: they get no span (they
// would bury the traces worth reading), only their metrics and log line.
var probes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// wrap adds what every request gets, whatever its route: a request id, X-Content-Type-Options:
// nosniff, panic recovery, metrics and one log line. route is the route's pattern (never the raw
// path, so labels stay bounded). Every handler the server serves is wrapped (the route table,
// /mcp, /ui/, the OpenAI-compatible door, unknown and unclean paths), so every answer carries
// the headers set here.
func (s *server) wrap(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		reqID := r.Header.Get("X-Request-Id")
		if !validRequestID(reqID) {
			reqID = rand.Text()
		}
		w.Header().Set("X-Request-Id", reqID)
		// A browser must take an answer for the media type it says it is: a JSON body or an error
		// that holds user text is never sniffed into HTML and run.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		info := &requestInfo{}
		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		var span *telemetry.HTTPSpan
		if !probes[route] {
			r, span = s.telemetry.StartHTTP(r, route)
		}
		s.limitBodyTime(w, r)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "panic serving request",
					slog.String("method", r.Method), slog.String("route", route), slog.String("http_request_id", reqID),
					slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					s.writeError(sw, r, fmt.Errorf("panic: %v", v))
				}
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.observe(route, r.Method, status, d)
			s.telemetry.Write("http", sw.Header().Get("Idempotent-Replayed") == "true", info.code)
			span.End(status, info.code)
			attrs := []slog.Attr{slog.String("method", r.Method), slog.String("route", route), slog.String("path", r.URL.Path),
				slog.Int("status", status), slog.Duration("duration", d), slog.Int64("bytes", sw.bytes),
				slog.String("user_id", info.userID), slog.String("http_request_id", reqID)}
			if info.code != "" {
				attrs = append(attrs, slog.String("code", info.code))
			}
			s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(sw, r)
	})
}

// limitBodyTime bounds the time the request's body may take to arrive with a read deadline on
// the connection (only headers have a timeout in http.Server, and WriteTimeout would cut event
// streams), and lifts the deadline as soon as the body has been read, so that a long answer is
// never cut by it. (net/http lifts it too when it starts watching the connection for a close
// after the body; timedBody does not rely on that.) A body that misses the deadline fails to
// read: readBody answers 408 and the connection is closed.
func (s *server) limitBodyTime(w http.ResponseWriter, r *http.Request) {
	if s.bodyTimeout < 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.bodyTimeout)) != nil {
		return // not a connection (an in-process test): nothing to bound
	}
	r.Body = &timedBody{ReadCloser: r.Body, rc: rc, timeout: s.bodyTimeout}
}

// timedBody lifts the read deadline of its connection at the end of the body. A read that fails
// fails with a carryon error whose message has no socket address in it (net/http's errors name
// both ends of the connection): ETIMEOUT when the deadline passed, which every door answers 408.
type timedBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	done    bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err == nil, err == io.EOF:
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = carryon.Errorf(carryon.ETIMEOUT, "the request body did not arrive within %s", b.timeout)
	default:
		var ne net.Error
		if errors.As(err, &ne) {
			err = carryon.Errorf(carryon.EINVALID, "reading the request body failed: the connection broke")
		}
	}
	return n, err
}

// bodyFirst reads the request body (up to limit bytes; the rest, if any, is left to next) before
// next sees it, so that a body that does not arrive in time is answered 408 by the server's own
// error answer, as on the native routes, whatever next would answer (the MCP SDK answers every
// failed read 400).
func (s *server) bodyFirst(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		head, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			if _, ok := carryon.AsError(err); !ok {
				err = carryon.Errorf(carryon.EINVALID, "reading the request body failed")
			}
			s.writeError(w, r, err)
			return
		}
		r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		next.ServeHTTP(w, r)
	})
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// validRequestID accepts a client's X-Request-Id when it is short and plain.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)
		if !ok {
			return false
		}
	}
	return true
}

// checkRoute authenticates the caller as the route requires and refuses unknown query parameters.
func (s *server) checkRoute(rt *Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Auth != AuthPublic {
			u, err := s.identify(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if rt.Auth == AuthAdmin && !u.Admin {
				s.writeError(w, r, carryon.Errorf(carryon.EFORBIDDEN, "%s %s needs an admin key", rt.Method, rt.Pattern))
				return
			}
			r = r.WithContext(carryon.NewContextWithDoor(carryon.NewContextWithUser(r.Context(), u), routeDoor(r)))
			adm, err := s.admit(w, r, u, routeGrows(rt))
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			defer adm.Leave()
		}
		if err := checkQuery(r, rt.Query); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := checkControls(r, rt); err != nil {
			s.writeError(w, r, err)
			return
		}
		if rt.MayLag && !freshQuery(r, rt.Query) {
			ctx, sr := store.WithStaleRead(r.Context())
			r, w = r.WithContext(ctx), &replicaWriter{ResponseWriter: w, sr: sr}
		}
		next.ServeHTTP(w, r)
	})
}

// routeDoor is the door of a request to a /v1 route: the API's, or MCP's when wire.DoorHeader
// says so (`carryon mcp` over stdio). The header is a label, not a credential: only "mcp" is
// taken from it.
func routeDoor(r *http.Request) carryon.Door {
	if carryon.Door(r.Header.Get(wire.DoorHeader)) == carryon.DoorMCP {
		return carryon.DoorMCP
	}
	return carryon.DoorAPI
}

// withDoor serves next with the door d in the request's context.
func withDoor(d carryon.Door, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(carryon.NewContextWithDoor(r.Context(), d)))
	})
}

// authenticated serves next only to a request with a valid bearer key, with the key's user in its
// context: the authentication of checkRoute, for a handler outside the route table (Config.MCP).
func (s *server) authenticated(next http.Handler) http.Handler {
	return s.authenticatedWith(carryon.DoorMCP, s.writeError, next)
}

// authenticatedWith is authenticated for door d with its own way to answer a refusal (a
// Config.Doors door's).
func (s *server) authenticatedWith(d carryon.Door, refuse func(http.ResponseWriter, *http.Request, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.identify(r)
		if err != nil {
			refuse(w, r, err)
			return
		}
		adm, err := s.admit(w, r, u, doorGrows(d, r))
		if err != nil {
			refuse(w, r, err)
			return
		}
		defer adm.Leave()
		next.ServeHTTP(w, r.WithContext(carryon.NewContextWithUser(r.Context(), u)))
	})
}

// identify authenticates the request and names its user in the request's log line.
func (s *server) identify(r *http.Request) (*carryon.User, error) {
	u, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.userID = u.ID
	}
	return u, nil
}

// authenticate finds the user of the request's bearer key. The identity comes only from the key.
func (s *server) authenticate(r *http.Request) (*carryon.User, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "this route needs an API key: send Authorization: Bearer <key>")
	}
	scheme, key, ok := strings.Cut(h, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "the Authorization header must be Bearer <key>")
	}
	u, err := s.users.Authenticate(r.Context(), key)
	switch carryon.ErrorCode(err) {
	case "":
		if u == nil {
			return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "the API key is not valid")
		}
		return u, nil
	case carryon.EUNAUTHORIZED, carryon.ENOTFOUND, carryon.EINVALID:
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "the API key is not valid or has been revoked")
	}
	return nil, err
}

// checkQuery refuses query parameters the route does not declare, repeated ones, and values out of
// their declared range or set.
func checkQuery(r *http.Request, allowed []Param) error {
	q, err := newQuery(r, allowed)
	if err != nil {
		return err
	}
	for _, p := range allowed {
		if p.Required {
			q.require(p.Name)
		}
		if !q.has(p.Name) {
			continue
		}
		if p.Type == "integer" {
			q.int(p.Name, p.Min, p.Max, 0)
		} else if len(p.Enum) > 0 && !slices.Contains(p.Enum, q.str(p.Name)) {
			q.errorf("query parameter %q must be one of %s, not %q", p.Name, strings.Join(p.Enum, ", "), q.str(p.Name))
		}
	}
	return q.err
}
