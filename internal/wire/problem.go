// Package wire is the HTTP API's vocabulary on the wire that the server (internal/httpapi) and
// the Go client (package client) share: the request and answer bodies that are not domain types,
// the problem document with the one map of error codes to statuses, entity tags and media types.
package wire

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// MediaJSON is the media type of the API's JSON bodies.
const MediaJSON = "application/json"

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
	carryon.EQUOTA:          {http.StatusInsufficientStorage, "Insufficient storage"},
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

// CodeOfStatus maps an HTTP status back to an error code, for answers that carry no problem body
// (a proxy's 502, say). It picks the code whose status matches, preferring the generic ones.
func CodeOfStatus(status int) string {
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

// Known reports whether code is one of the API's error codes.
func Known(code string) bool {
	_, ok := codeInfo[code]
	return ok
}

// TitleOf is the problem title of an error code; unknown codes are internal errors.
func TitleOf(code string) string {
	if ci, ok := codeInfo[code]; ok {
		return ci.title
	}
	return codeInfo[carryon.EINTERNAL].title
}

// Codes are the API's error codes, sorted.
func Codes() []string {
	out := make([]string, 0, len(codeInfo))
	for c := range codeInfo {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// ETag is the entity tag of a session at version v.
func ETag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// ParseTag reads one entity tag: "N", W/"N" or a bare N.
func ParseTag(t string) (int64, bool) {
	t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		t = t[1 : len(t)-1]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	return n, err == nil && n >= 0
}

// IfMatch reads an If-Match header: the expected version, or any (for *), or neither (empty).
// A list of tags, or anything but one tag of a version, is EINVALID.
func IfMatch(h string) (version *int64, star bool, err error) {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return nil, false, nil
	case h == "*":
		return nil, true, nil
	case strings.Contains(h, ","):
		return nil, false, carryon.Errorf(carryon.EINVALID, "If-Match must name one version, like \"3\"; got %q", h)
	}
	n, ok := ParseTag(h)
	if !ok {
		return nil, false, carryon.Errorf(carryon.EINVALID, "If-Match must be a version, like \"3\"; got %q", h)
	}
	return &n, false, nil
}
