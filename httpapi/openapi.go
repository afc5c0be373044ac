package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// obj is a JSON object of the OpenAPI document; encoding/json sorts its keys, so the document is
// the same bytes every time.
type obj = map[string]any

// pathParam finds the wildcards of a route pattern.
var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// buildOpenAPI generates the OpenAPI 3.1 document of the routes: paths and operations from the
// route table, schemas from the Go types of the bodies (see schemaGen).
func buildOpenAPI(routes []Route) []byte {
	g := &schemaGen{schemas: obj{}}
	g.ref(reflect.TypeFor[Problem]())
	paths := obj{}
	for i := range routes {
		rt := &routes[i]
		item, _ := paths[rt.Pattern].(obj)
		if item == nil {
			item = obj{}
			paths[rt.Pattern] = item
		}
		item[strings.ToLower(rt.Method)] = g.operation(rt)
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "carryon",
			"version": carryon.Version,
			"description": "The durable session hub for LLM agents. Errors are RFC 9457 problem+json documents with a `code`. " +
				"Writes take an expected version (`If-Match` or `expected_version`) and an idempotency key (`Idempotency-Key` or `request_id`).",
		},
		"paths": paths,
		"components": obj{
			"schemas": g.schemas,
			"securitySchemes": obj{
				"bearer": obj{"type": "http", "scheme": "bearer", "description": "An API key: Authorization: Bearer ck_..."},
			},
			"responses": obj{
				"Problem": obj{
					"description": "An error, as RFC 9457 problem details; `code` says which.",
					"content":     obj{"application/problem+json": obj{"schema": obj{"$ref": "#/components/schemas/Problem"}}},
				},
			},
		},
		"security": []any{obj{"bearer": []any{}}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("httpapi: encoding the OpenAPI document: %v", err))
	}
	return b
}

// operationID names an operation after its method and path: POST /v1/sessions/{id}/fork is
// post_sessions_id_fork.
func operationID(rt *Route) string {
	p := strings.TrimPrefix(rt.Pattern, "/v1")
	p = strings.NewReplacer("{", "", "}", "", ".", "_", "/", "_").Replace(p)
	return strings.ToLower(rt.Method) + strings.TrimRight(p, "_")
}

// operation describes one route.
func (g *schemaGen) operation(rt *Route) obj {
	op := obj{"operationId": operationID(rt), "summary": rt.Summary, "tags": []string{tagOf(rt.Pattern)}}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(rt.Pattern, -1) {
		desc := "an id"
		if rt.SessionScoped {
			desc = "the session id"
		} else if strings.HasPrefix(rt.Pattern, "/v1/users/") {
			desc = "a user id or name"
		} else if strings.HasPrefix(rt.Pattern, "/v1/keys/") {
			desc = "a key id"
		} else if m[1] == "namespace" {
			desc = "a namespace: dot-separated segments of a-z, 0-9, _ and -"
		} else if m[1] == "key" {
			desc = "a key: 1 to 200 characters of A-Z, a-z, 0-9, _ . : @ -"
		}
		params = append(params, obj{"name": m[1], "in": "path", "required": true, "description": desc, "schema": obj{"type": "string"}})
	}
	for _, p := range rt.Query {
		s := obj{"type": p.Type}
		if p.Type == "integer" {
			s["minimum"], s["maximum"] = p.Min, p.Max
		}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
		params = append(params, obj{"name": p.Name, "in": "query", "required": p.Required, "description": p.Description, "schema": s})
	}
	if rt.Versioned {
		params = append(params, obj{"name": "If-Match", "in": "header", "schema": obj{"type": "string"},
			"description": `The expected session version, "N"; a stale one answers 412. Same as expected_version (which answers 409).`})
	}
	if rt.Write {
		params = append(params,
			obj{"name": "Idempotency-Key", "in": "header", "schema": obj{"type": "string", "maxLength": carryon.MaxRequestIDLength},
				"description": "Makes the write safe to retry: a repeat answers the first response with Idempotent-Replayed: true. Same as request_id."})
	}
	if rt.Method == "GET" && rt.SessionScoped && isType[carryon.SessionView](rt.Response) {
		params = append(params, obj{"name": "If-None-Match", "in": "header", "schema": obj{"type": "string"},
			"description": `A version the client has, "N"; answers 304 when the session is still at it.`})
	}
	if params != nil {
		op["parameters"] = params
	}
	if rt.Request != nil {
		content := obj{mediaJSON: obj{"schema": g.ref(reflect.TypeOf(rt.Request))}}
		if isType[MemoryPatchRequest](rt.Request) {
			content[mediaMergePatch] = obj{"schema": obj{"type": "object", "description": "the merge patch itself"}}
		}
		op["requestBody"] = obj{"required": !rt.BodyOptional, "content": content}
	}
	op["responses"] = g.responses(rt)
	if rt.Auth == AuthPublic {
		op["security"] = []any{}
	}
	return op
}

// responses lists the answers of a route: its success and the problems it can answer.
func (g *schemaGen) responses(rt *Route) obj {
	ok := obj{"description": http.StatusText(rt.Status)}
	headers := obj{}
	switch {
	case rt.Response != nil:
		ok["content"] = obj{mediaJSON: obj{"schema": g.ref(reflect.TypeOf(rt.Response))}}
	case rt.Pattern == "/metrics":
		ok["content"] = obj{"text/plain": obj{"schema": obj{"type": "string"}}}
	case rt.Pattern == "/openapi.json":
		ok["content"] = obj{mediaJSON: obj{"schema": obj{"type": "object"}}}
	}
	switch rt.Response.(type) {
	case carryon.Session, carryon.SessionView, carryon.WorkingMemoryState, carryon.AppendResult:
		headers["ETag"] = obj{"description": `The session version, "N".`, "schema": obj{"type": "string"}}
	}
	if rt.Status == http.StatusCreated {
		headers["Location"] = obj{"description": "The URL of what was created.", "schema": obj{"type": "string"}}
	}
	if rt.Write {
		headers["Idempotent-Replayed"] = obj{"description": "true when this is the stored answer of an earlier request with the same key.", "schema": obj{"type": "string"}}
	}
	if len(headers) > 0 {
		ok["headers"] = headers
	}
	out := obj{strconv.Itoa(rt.Status): ok, "default": problemRef}
	add := func(codes ...int) {
		for _, c := range codes {
			out[strconv.Itoa(c)] = problemRef
		}
	}
	if rt.Query != nil || rt.Request != nil || rt.Write {
		add(400)
	}
	if rt.Auth != AuthPublic {
		add(401)
	}
	if rt.Auth == AuthAdmin {
		add(403)
	}
	if strings.Contains(rt.Pattern, "{") {
		add(404)
	}
	if rt.Request != nil {
		add(413, 415)
	}
	if rt.Write {
		add(409, 422)
	}
	if rt.Versioned {
		add(412, 428)
		if rt.SessionScoped {
			add(410)
		}
	}
	if rt.Method == "GET" && isType[carryon.SessionView](rt.Response) {
		out["304"] = obj{"description": "Not modified: the session is still at the version in If-None-Match."}
	}
	if rt.Pattern == "/readyz" {
		add(503)
	}
	return out
}

var problemRef = obj{"$ref": "#/components/responses/Problem"}

// tagOf groups operations by the first path segment after /v1.
func tagOf(pattern string) string {
	p := strings.Split(strings.TrimPrefix(strings.TrimPrefix(pattern, "/v1"), "/"), "/")[0]
	switch p {
	case "me", "users", "keys":
		return "users"
	case "sessions":
		return "sessions"
	case "memories":
		return "memories"
	}
	return "operations"
}

// handleOpenAPI serves the document generated when the server was made.
func (s *server) handleOpenAPI() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", mediaJSON)
		w.Header().Set("Content-Length", strconv.Itoa(len(s.openapi)))
		_, _ = w.Write(s.openapi)
	}
}

// isType reports whether v holds a T.
func isType[T any](v any) bool { _, ok := v.(T); return ok }
