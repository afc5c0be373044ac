package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
	"github.com/carryon-hub/carryon/internal/wire"
)

// Media types the API reads.
const (
	mediaJSON       = wire.MediaJSON
	mediaMergePatch = "application/merge-patch+json"
)

// bodyOptions say what a route accepts as a request body.
type bodyOptions struct {
	// optional allows an empty body (every field is optional); the zero value is decoded then.
	optional bool
	// mergePatch also accepts application/merge-patch+json.
	mergePatch bool
}

// readBody reads the request body under the size limit and checks its media type and encoding. It
// returns nil for an empty body and the media type it was sent with.
func (s *server) readBody(r *http.Request, o bodyOptions) ([]byte, string, error) {
	if r.ContentLength > s.maxBody {
		return nil, "", tooLarge(s.maxBody)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return s.emptyBody(o)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, "", tooLarge(s.maxBody)
		}
		if _, ok := carryon.AsError(err); ok {
			return nil, "", err // timedBody's: ETIMEOUT for a body that is too slow
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, "", carryon.Errorf(carryon.ETIMEOUT, "the request body did not arrive within %s", s.bodyTimeout)
		}
		return nil, "", carryon.Errorf(carryon.EINVALID, "reading the request body failed")
	}
	if len(body) == 0 {
		return s.emptyBody(o)
	}
	media, err := checkMediaType(r.Header.Get("Content-Type"), o.mergePatch)
	if err != nil {
		return nil, "", err
	}
	if !utf8.Valid(body) {
		return nil, "", carryon.Errorf(carryon.EINVALID, "the request body is not valid UTF-8")
	}
	// A UTF-8 byte-order mark is ignored, as RFC 8259 section 8.1 allows.
	if body = bytes.TrimPrefix(body, utf8BOM); len(body) == 0 {
		return s.emptyBody(o)
	}
	return body, media, nil
}

// utf8BOM is the UTF-8 encoding of U+FEFF, which some tools put before a JSON body.
var utf8BOM = []byte("\xef\xbb\xbf")

func (s *server) emptyBody(o bodyOptions) ([]byte, string, error) {
	if !o.optional {
		return nil, "", carryon.Errorf(carryon.EINVALID, "a JSON request body is required")
	}
	return nil, "", nil
}

func tooLarge(limit int64) error {
	return carryon.Errorf(carryon.ETOOLARGE, "the request body is larger than the limit of %d bytes", limit)
}

// checkMediaType accepts application/json (with parameters; a charset must be UTF-8) and, where
// allowed, application/merge-patch+json. A body without a Content-Type is refused.
func checkMediaType(ct string, mergePatch bool) (string, error) {
	want := "Content-Type must be " + mediaJSON
	if mergePatch {
		want += " or " + mediaMergePatch
	}
	if ct == "" {
		return "", carryon.Errorf(carryon.EUNSUPPORTED, "the request has a body but no Content-Type; %s", want)
	}
	media, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", carryon.Errorf(carryon.EUNSUPPORTED, "malformed Content-Type %q; %s", ct, want)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return "", carryon.Errorf(carryon.EUNSUPPORTED, "charset %q is not supported; send UTF-8", cs)
	}
	if media == mediaJSON || (mergePatch && media == mediaMergePatch) {
		return media, nil
	}
	return "", carryon.Errorf(carryon.EUNSUPPORTED, "Content-Type %q is not supported; %s", media, want)
}

// decode reads the request body as exactly one JSON value of type T. Unknown fields, trailing data,
// invalid UTF-8 and wrong types are refused with an EINVALID error that says what and where.
func decode[T any](s *server, r *http.Request, o bodyOptions) (T, error) {
	var v T
	body, _, err := s.readBody(r, o)
	if err != nil || body == nil {
		return v, err
	}
	return v, unmarshalStrict(body, &v)
}

// unmarshalStrict decodes exactly one JSON value from body into v (a pointer) through the input
// gate (internal/jsongate): unknown fields, field names in another case, a name twice in one
// object, lone UTF-16 surrogates, NUL characters, numbers beyond a 64-bit float, nesting deeper
// than jsongate.MaxDepth and trailing data are refused with an EINVALID error that says what and
// where. Numbers decoded into an interface are json.Number, so that an integer above 2^53 is
// kept exactly.
func unmarshalStrict(body []byte, v any) error {
	if err := jsongate.Decode(body, v); err != nil {
		return carryon.Errorf(carryon.EINVALID, "%s", err.Error())
	}
	return nil
}

// query reads the declared query parameters of a route. Unknown or repeated parameters are refused,
// so a typo never passes silently.
type query struct {
	values url.Values
	err    error
}

func newQuery(r *http.Request, allowed []Param) (*query, error) {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "malformed query string: %v", err)
	}
	for name, vs := range vals {
		known := false
		for _, p := range allowed {
			known = known || p.Name == name || p.Type == "object" && isMember(name, p.Name)
		}
		if !known {
			return nil, carryon.Errorf(carryon.EINVALID, "unknown query parameter %q", name)
		}
		if len(vs) > 1 {
			return nil, carryon.Errorf(carryon.EINVALID, "query parameter %q is given %d times", name, len(vs))
		}
	}
	return &query{values: vals}, nil
}

// has reports whether the parameter was given.
func (q *query) has(name string) bool { return q.values.Has(name) }

// isMember says whether name is name[key] of an object parameter (style deepObject), key not empty.
func isMember(name, object string) bool {
	key, ok := strings.CutPrefix(name, object+"[")
	return ok && len(key) > 1 && strings.HasSuffix(key, "]")
}

// members returns the keys and values of the object parameter name (name[key]=value), or nil.
func (q *query) members(name string) map[string]string {
	var out map[string]string
	for k, vs := range q.values {
		if isMember(k, name) && len(vs) > 0 {
			if out == nil {
				out = map[string]string{}
			}
			out[k[len(name)+1:len(k)-1]] = vs[0]
		}
	}
	return out
}

// time returns the parameter as an RFC 3339 time, or the zero time when it is absent. The first
// bad parameter is kept in q.err.
func (q *query) time(name string) time.Time {
	if !q.values.Has(name) {
		return time.Time{}
	}
	raw := q.values.Get(name)
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		q.errorf("query parameter %q must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", name, raw)
		return time.Time{}
	}
	return t
}

// str returns the parameter's value or "".
func (q *query) str(name string) string { return q.values.Get(name) }

// int returns the parameter as an integer in [lo, hi], or def when it is absent. The first bad
// parameter is kept in q.err.
func (q *query) int(name string, lo, hi, def int64) int64 {
	if !q.values.Has(name) {
		return def
	}
	raw := q.values.Get(name)
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < lo || n > hi {
		if q.err == nil {
			q.err = carryon.Errorf(carryon.EINVALID, "query parameter %q must be an integer from %d to %d, not %q", name, lo, hi, raw)
		}
		return def
	}
	return n
}

// require records an error when a required parameter is absent.
func (q *query) require(names ...string) {
	for _, n := range names {
		if !q.values.Has(n) && q.err == nil {
			q.err = carryon.Errorf(carryon.EINVALID, "query parameter %q is required", n)
		}
	}
}

// errorf records an error for a parameter unless one is already recorded.
func (q *query) errorf(format string, args ...any) {
	if q.err == nil {
		q.err = carryon.Errorf(carryon.EINVALID, "%s", fmt.Sprintf(format, args...))
	}
}
