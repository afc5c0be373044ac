package httpapi

import (
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// The answers of the OpenAPI document: for each route its success, with the headers it carries,
// and every problem it can answer, by status, with the codes each status can carry. A test sends
// every answer the HTTP tests receive through a validator of this document, so what is written here
// is checked against the handlers.

// componentHeaders are the response headers several answers share.
var componentHeaders = obj{
	"X-Request-Id": obj{"required": true, "schema": obj{"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
		"description": "The request's id, as in the server's log: the client's X-Request-Id when it is plain, a new one otherwise."},
	"X-Content-Type-Options": obj{"required": true, "schema": obj{"type": "string", "enum": []string{"nosniff"}},
		"description": "nosniff: the answer is the media type its Content-Type says, never sniffed as another."},
	"ETag": obj{"required": true, "schema": obj{"type": "string", "pattern": `^"[0-9]+"$`},
		"description": `The session's version, "N"; send it back in If-Match or If-None-Match.`},
	"Location": obj{"required": true, "schema": obj{"type": "string"}, "description": "The URL of what was created or started."},
	"Idempotent-Replayed": obj{"schema": obj{"type": "string", "enum": []string{"true"}},
		"description": "Present (true) when this is the stored answer of an earlier request with the same idempotency key."},
	"Retry-After": obj{"schema": obj{"type": "string", "pattern": "^[0-9]+$"}, "description": "Seconds to wait before trying again."},
	"RateLimit-Policy": obj{"schema": obj{"type": "string"},
		"description": `The caller's rate policy (draft-ietf-httpapi-ratelimit-headers-11), "rate";q=<burst>;w=<seconds to refill>; on every answer to a user with a rate limit.`},
	"RateLimit": obj{"schema": obj{"type": "string"},
		"description": `What is left of the caller's rate, "rate";r=<requests left>;t=<seconds until full>; on every answer to a user with a rate limit.`},
	"WWW-Authenticate": obj{"required": true, "schema": obj{"type": "string", "pattern": "^Bearer "},
		"description": "The scheme to authenticate with: Bearer."},
	"NoStore": obj{"required": true, "schema": obj{"type": "string", "enum": []string{"no-store"}},
		"description": "Cache-Control: no-store; the answer is not to be cached."},
}

// componentParameters are the request parameters every operation shares.
var componentParameters = obj{
	"X-Request-Id": obj{"name": "X-Request-Id", "in": "header", "required": false,
		"schema":      obj{"type": "string", "maxLength": 128},
		"description": "An id for this request in the server's log; kept when it is up to 128 of A-Z a-z 0-9 - _ . : and echoed in the answer."},
}

// header refers to a shared response header.
func header(name string) obj { return obj{"$ref": "#/components/headers/" + name} }

// codeMeaning says what each error code means to a client; a route may say more (routeCodes).
var codeMeaning = map[string]string{
	carryon.EINVALID:        "the input is malformed or breaks a rule (unknown or bad query parameters included); detail says which",
	carryon.EUNAUTHORIZED:   "no API key, or one that is not valid or has been revoked",
	carryon.EFORBIDDEN:      "the route needs an admin key",
	carryon.ENOTFOUND:       "no such resource, or one the caller does not own",
	carryon.EVERSION:        "the expected version is stale; current_version is the session's version now",
	carryon.EINFLIGHT:       "a request with the same idempotency key is still being processed; retry after Retry-After",
	carryon.EKEYREUSED:      "the idempotency key was used before for a different request",
	carryon.EBUSY:           "the session has an active run (active_run_id); retry after Retry-After or pick another multitask",
	carryon.ECLOSED:         "the session is closed; restore it first",
	carryon.EEXPIRED:        "the session expired; restore it first",
	carryon.ECONFLICT:       "the request conflicts with the current state",
	carryon.EVERSIONNEEDED:  "this server requires an expected version on writes (If-Match or expected_version)",
	carryon.ETOOLARGE:       "the request body is over the server's limit",
	carryon.ETOOMANY:        "the caller has as many requests in flight (or event streams open) as a user may, or no request left of its rate (RateLimit, RateLimit-Policy); retry after Retry-After",
	carryon.EQUOTA:          "the caller stores as many bytes as its quota allows: nothing more is written; reads, deletes, close, cancel and forget still work",
	carryon.EUNSUPPORTED:    "the body's Content-Type is not one the route reads",
	carryon.EINTERNAL:       "an unexpected failure; the server logs it and the answer says nothing more",
	carryon.EUNAVAILABLE:    "the server is not ready, or its database is unavailable (restarting, failing over, cut off); retry after Retry-After with the same request id: a write answered so may or may not have been applied, and the retry applies it once",
	carryon.ENOTIMPLEMENTED: "this server is not configured for this route",
}

// routeCodes are the codes a route's service answers beyond what the kind of route implies, with
// what they mean there.
var routeCodes = map[string]map[string]string{
	"POST /v1/sessions":            {carryon.ECONFLICT: "external_id names an existing session of the caller and if_exists is error"},
	"POST /v1/sessions/{id}/runs":  {carryon.EBUSY: ""},
	"GET /v1/sessions/{id}/export": {carryon.ETOOLARGE: "the session's bundle would be over 64 MiB"},
	"POST /v1/sessions/import": {carryon.EINVALID: "the bundle is truncated, changed (checksum), of a newer format version, has a line of an unknown kind or rows that do not fit together, or is a fork of no session of the caller; the items are no OpenAI list",
		carryon.ECONFLICT: "keep_ids and an id of the bundle (session, run, action) or its external id exists already, anyone's",
		carryon.ETOOLARGE: "the body is over 64 MiB"},
	"POST /v1/sessions/{id}/compact": {carryon.EBUSY: "the session has an active run: compact it once the run ended",
		carryon.EUNAVAILABLE: "the summarizer failed or timed out: nothing was stored, the history and the context are as they were",
		carryon.EINVALID:     "keep_last is negative, instructions are over 16 KiB, or no message is left to summarize (all newer than the last compaction are kept)"},
	"DELETE /v1/sessions/{id}/messages/{seq}": {carryon.ENOTFOUND: "no session of the caller with that id, or no message with that seq it can read (never stored, or deleted already)",
		carryon.ECLOSED: "", carryon.EEXPIRED: ""},
	"POST /v1/chat": {carryon.ENOTFOUND: "session_id names no session of the caller", carryon.EBUSY: "",
		carryon.ECLOSED: "", carryon.EEXPIRED: ""},
	"POST /v1/runs/{id}/approve": {carryon.ECONFLICT: "the run is not waiting for a decision on that action, or the decision does not fit the action",
		carryon.ECLOSED:  "the run's session is closed: nothing is decided, and the run ends with that reason",
		carryon.EEXPIRED: "the run's session expired: nothing is decided, and the run ends with that reason"},
	"POST /v1/runs/{id}/tool_outputs": {carryon.ECONFLICT: "the run is not waiting for tool outputs (another client answered first, or it ended)",
		carryon.ECLOSED:  "the run's session is closed: the outputs are not taken, and the run ends with that reason",
		carryon.EEXPIRED: "the run's session expired: the outputs are not taken, and the run ends with that reason"},
	"POST /v1/users": {carryon.ECONFLICT: "a user with that name exists already"},
	"POST /v1/webhooks": {carryon.ENOTFOUND: "session_id names no session of the caller",
		carryon.ECONFLICT: "the caller has the most webhooks a user may have (100)"},
	"DELETE /v1/users/{id}": {carryon.ENOTFOUND: "no such user (or its forgetting finished: a repeat after a lost answer finds it gone)",
		carryon.EINVALID: "the caller names itself: another admin must forget it", carryon.EUNAVAILABLE: ""},
	"GET /readyz": {carryon.EUNAVAILABLE: ""},
	"PUT /v1/users/{id}/limits": {carryon.ENOTFOUND: "no such user",
		carryon.EINVALID: "a limit is negative, not a number, or not one of the fields"},
	"PUT /v1/users/{id}/budget": {carryon.ENOTFOUND: "no such user"},
}

// problemCodes lists the error codes a route can answer.
func problemCodes(rt *Route) []string {
	// Every route refuses undeclared query parameters, and any route can fail unexpectedly.
	codes := []string{carryon.EINVALID, carryon.EINTERNAL}
	add := func(cs ...string) { codes = append(codes, cs...) }
	if rt.Auth != AuthPublic {
		// Authenticating reads the key from the database: any route with a key can find it
		// unavailable.
		add(carryon.EUNAUTHORIZED, carryon.ETOOMANY, carryon.EUNAVAILABLE)
	}
	if rt.Auth == AuthAdmin {
		add(carryon.EFORBIDDEN)
	}
	if rt.Auth != AuthPublic && routeGrows(rt) {
		add(carryon.EQUOTA)
	}
	if strings.Contains(rt.Pattern, "{") && rt.Method != http.MethodPut { // a PUT makes what it names
		add(carryon.ENOTFOUND)
	}
	if rt.Request != nil || rt.BodyOptional {
		add(carryon.ETOOLARGE, carryon.EUNSUPPORTED)
	}
	if needsOptionalService(rt.Pattern) {
		add(carryon.ENOTIMPLEMENTED)
	}
	if rt.Write {
		add(carryon.EINFLIGHT, carryon.EKEYREUSED)
	}
	if takesVersion(rt) {
		add(carryon.EVERSION)
	}
	if existingSessionWrite(rt) {
		add(carryon.EVERSIONNEEDED)
		if !slices.Contains([]string{"close", "restore"}, lastSegment(rt.Pattern)) && rt.Method != http.MethodDelete {
			add(carryon.ECLOSED, carryon.EEXPIRED)
		}
	}
	for c := range routeCodes[rt.Method+" "+rt.Pattern] {
		add(c)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// needsOptionalService reports whether a route answers 501 on a server configured without the
// service it needs (runs, long-term memory, webhooks, the context builder, compactions).
func needsOptionalService(pattern string) bool {
	return strings.HasPrefix(pattern, "/v1/runs/") || strings.HasPrefix(pattern, "/v1/memories") ||
		strings.HasPrefix(pattern, "/v1/webhooks") || pattern == "/v1/chat" || pattern == "/v1/sessions/{id}/runs" || pattern == "/v1/sessions/{id}/context" ||
		pattern == "/v1/sessions/{id}/compact" || pattern == "/v1/sessions/{id}/compactions" ||
		pattern == "/v1/sessions/{id}/export" || pattern == "/v1/sessions/import" || pattern == "/v1/users/{id}/limits" ||
		pattern == "/v1/me/usage" || pattern == "/v1/users/{id}/budget"
}

// takesVersion reports whether a write checks an expected version (Route.Versioned): writes to a
// session (a fork checks its source's), the short path, which writes to the session it names, and
// the writes of a long-term memory item.
func takesVersion(rt *Route) bool { return rt.Versioned }

// existingSessionWrite reports whether a route writes to an existing session, so that
// Config.RequireVersion makes it need a version; a fork writes a new session, and a long-term
// memory item is no session.
func existingSessionWrite(rt *Route) bool {
	return rt.Versioned && lastSegment(rt.Pattern) != "fork" && !strings.HasPrefix(rt.Pattern, "/v1/memories")
}

func lastSegment(pattern string) string { return pattern[strings.LastIndex(pattern, "/")+1:] }

// responses lists the answers of a route: its success and every problem it can answer. A HEAD
// operation has the same answers; their bodies are left out on the wire, Content-Type stays.
func (g *schemaGen) responses(rt *Route) obj {
	out := obj{strconv.Itoa(rt.Status): g.success(rt)}
	if rt.Method == http.MethodPost && rt.Pattern == "/v1/sessions/{id}/runs" {
		out["200"] = sseResponse("With Accept: text/event-stream: the run's events as they happen, until its last.",
			obj{"Location": header("Location"), "Idempotent-Replayed": header("Idempotent-Replayed"),
				"Carryon-Run-Id": obj{"required": true, "schema": obj{"type": "string"}, "description": "The id of the run started."}})
	}
	if rt.Method == http.MethodPost && rt.Pattern == "/v1/sessions" {
		ok := g.success(rt)
		ok["description"] = "OK: external_id names an existing session of the caller, answered unchanged (nothing is stored)."
		out["200"] = ok
	}
	if isType[carryon.SessionView](rt.Response) {
		out["304"] = obj{"description": "Not modified: the session is still at a version in If-None-Match.",
			"headers": obj{"X-Request-Id": header("X-Request-Id"), "X-Content-Type-Options": header("X-Content-Type-Options"), "ETag": header("ETag")}}
	}
	byStatus := map[int][]string{}
	for _, c := range problemCodes(rt) {
		st := wire.StatusOf(c)
		byStatus[st] = append(byStatus[st], c)
		if c == carryon.EVERSION {
			byStatus[http.StatusPreconditionFailed] = append(byStatus[http.StatusPreconditionFailed], c)
		}
	}
	for st, codes := range byStatus {
		out[strconv.Itoa(st)] = problemResponse(rt, st, codes)
	}
	out["default"] = obj{"description": "An error not listed here, such as one from a proxy in front of the server (problem+json when it comes from carryon).",
		"content": obj{"application/problem+json": obj{"schema": obj{"$ref": "#/components/schemas/Problem"}}}}
	return out
}

// success describes a route's successful answer.
func (g *schemaGen) success(rt *Route) obj {
	if rt.Pattern == "/v1/runs/{id}/events" {
		return sseResponse("The run's events after `after` (or Last-Event-ID), then new ones as they happen, until its last.", obj{})
	}
	ok := obj{"description": http.StatusText(rt.Status) + ": " + rt.Summary}
	headers := obj{"X-Request-Id": header("X-Request-Id"), "X-Content-Type-Options": header("X-Content-Type-Options")}
	var content obj
	switch {
	case rt.Response != nil:
		content = obj{mediaJSON: obj{"schema": g.ref(reflect.TypeOf(rt.Response))}}
	case rt.Pattern == "/v1/sessions/{id}/export":
		content = obj{mediaNDJSON: obj{"schema": obj{"type": "string", "description": "the session's bundle: JSON Lines (docs/EXPORT.md)"}}}
		headers["Content-Disposition"] = obj{"required": true, "schema": obj{"type": "string"}, "description": "attachment, named after the session"}
		headers["Cache-Control"] = header("NoStore")
	case rt.Pattern == "/metrics":
		content = obj{"text/plain": obj{"schema": obj{"type": "string", "description": "the Prometheus text exposition format"}}}
	case rt.Pattern == "/openapi.json":
		content = obj{mediaJSON: obj{"schema": obj{"type": "object", "description": "this document"}}}
	}
	if content != nil {
		ok["content"] = content
	}
	switch rt.Response.(type) {
	case carryon.Session, carryon.SessionView, carryon.WorkingMemoryState, carryon.AppendResult:
		headers["ETag"] = header("ETag")
	case wire.CreateUserResponse, wire.CreateKeyResponse:
		headers["Cache-Control"] = header("NoStore")
	}
	if rt.Status == http.StatusCreated || rt.Status == http.StatusAccepted {
		headers["Location"] = header("Location")
	}
	if rt.Write {
		headers["Idempotent-Replayed"] = header("Idempotent-Replayed")
	}
	ok["headers"] = headers
	return ok
}

// sseResponse is a 200 answer of Server-Sent Events. Each event has id (the event's seq), event
// (its type) and data (the Event as JSON), but a model delta previewed before it is stored, which
// has no id (and seq 0 in its data); a failure ends the stream with an event named error whose
// data is a Problem. x-event-schema is the schema of one event as {id, event, data} with
// data decoded, as OpenAPI 3.2's itemSchema would say it.
func sseResponse(description string, extra obj) obj {
	headers := obj{"X-Request-Id": header("X-Request-Id"), "X-Content-Type-Options": header("X-Content-Type-Options"),
		"Cache-Control": obj{"required": true, "schema": obj{"type": "string", "enum": []string{"no-cache"}}, "description": "no-cache"}}
	for k, v := range extra {
		headers[k] = v
	}
	r := obj{"description": description, "headers": headers}
	r["content"] = obj{"text/event-stream": obj{
		"schema": obj{"type": "string", "description": "Server-Sent Events: `id` is the event's seq, `event` its type, `data` the Event as JSON. " +
			"A `model.delta` may first come without `id` (seq 0): a preview of the model's words, sent as they are said, before the step's write stores them; " +
			"a live stream then skips their stored copies, and a stream resumed with Last-Event-ID gets the stored copies. " +
			"A failure ends the stream with `event: error` and a Problem as data. A comment line every 15 seconds keeps an idle connection open."},
		"x-event-schema": obj{"oneOf": []any{
			obj{"type": "object", "additionalProperties": false, "required": []string{"id", "event", "data"}, "properties": obj{
				"id":    obj{"type": "string", "pattern": "^[0-9]+$"},
				"event": obj{"$ref": "#/components/schemas/Event/properties/type"},
				"data":  obj{"$ref": "#/components/schemas/Event"}}},
			obj{"type": "object", "additionalProperties": false, "required": []string{"event", "data"}, "properties": obj{
				"event": obj{"const": string(carryon.EventModelDelta)},
				"data":  obj{"$ref": "#/components/schemas/Event"}}},
			obj{"type": "object", "additionalProperties": false, "required": []string{"event", "data"}, "properties": obj{
				"event": obj{"const": "error"},
				"data":  obj{"$ref": "#/components/schemas/Problem"}}},
		}},
	}}
	return r
}

// problemResponse describes the problems a route answers with one status.
func problemResponse(rt *Route, status int, codes []string) obj {
	slices.Sort(codes)
	var why []string
	for _, c := range codes {
		m := codeMeaning[c]
		if s := routeCodes[rt.Method+" "+rt.Pattern][c]; s != "" {
			m = s
		}
		if status == http.StatusPreconditionFailed {
			m = "If-Match names a stale version; current_version is the session's version now"
		}
		why = append(why, "`"+c+"`: "+m)
	}
	headers := obj{"X-Request-Id": header("X-Request-Id"), "X-Content-Type-Options": header("X-Content-Type-Options"), "Cache-Control": header("NoStore")}
	switch status {
	case http.StatusUnauthorized:
		headers["WWW-Authenticate"] = header("WWW-Authenticate")
	case http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		headers["Retry-After"] = header("Retry-After")
	}
	if status == http.StatusTooManyRequests {
		headers["RateLimit-Policy"], headers["RateLimit"] = header("RateLimit-Policy"), header("RateLimit")
	}
	return obj{"description": http.StatusText(status) + ". " + strings.Join(why, "; ") + ".", "headers": headers,
		"content": obj{"application/problem+json": obj{"schema": obj{"allOf": []any{
			obj{"$ref": "#/components/schemas/Problem"},
			obj{"properties": obj{"status": obj{"const": status}, "code": obj{"enum": codes}}},
		}}}}}
}
