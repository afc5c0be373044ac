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
	"github.com/carryon-hub/carryon/internal/wire"
)

// obj is a JSON object of the OpenAPI document; encoding/json sorts its keys, so the document is
// the same bytes every time.
type obj = map[string]any

// pathParam finds the wildcards of a route pattern.
var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// OpenAPI returns the OpenAPI 3.1 document the server serves at /openapi.json, for tools that
// read it offline (`carryon openapi` prints it).
func OpenAPI() []byte { return buildOpenAPI(routeTable()) }

// buildOpenAPI generates the OpenAPI 3.1 document of the routes: paths and operations from the
// route table, schemas from the Go types of the bodies (see schemaGen), answers from what the
// handlers and services can answer (see responses). Every GET route also answers HEAD (net/http
// serves HEAD with the GET handler and drops the body), so each has a head operation too.
func buildOpenAPI(routes []Route) []byte {
	g := newSchemaGen()
	g.ref(reflect.TypeFor[wire.Problem]())
	g.ref(reflect.TypeFor[carryon.Event]())    // the data of the events streams send
	g.ref(reflect.TypeFor[carryon.ToolCall]()) // the items of a message's tool_calls
	paths := obj{}
	for i := range routes {
		rt := &routes[i]
		item, _ := paths[rt.Pattern].(obj)
		if item == nil {
			item = obj{}
			paths[rt.Pattern] = item
		}
		item[strings.ToLower(rt.Method)] = g.operation(rt, rt.Method)
		if rt.Method == http.MethodGet {
			item["head"] = g.operation(rt, http.MethodHead)
		}
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "carryon",
			"version": carryon.Version,
			"summary": "The durable session hub for LLM agents.",
			"description": "The durable session hub for LLM agents. Errors are RFC 9457 problem+json documents with a `code`. " +
				"Writes take an expected version (`If-Match` or `expected_version`) and an idempotency key (`Idempotency-Key` or `request_id`). " +
				"Every answer carries `X-Request-Id` and `X-Content-Type-Options: nosniff`. Every GET route also answers HEAD with the same status and headers and no body.",
		},
		"servers": []any{
			obj{"url": "/", "description": "The server that serves this document"},
			obj{"url": "http://{host}", "description": "A local server (`carryon serve` listens on 127.0.0.1:8420 unless told otherwise)",
				"variables": obj{"host": obj{"default": "127.0.0.1:8420", "description": "host and port"}}},
		},
		"tags": []any{
			obj{"name": "sessions", "description": "Sessions, their messages, working memory, context and runs"},
			obj{"name": "runs", "description": "Runs of the agent, their events and tool journal; the short path /v1/chat"},
			obj{"name": "memories", "description": "The caller's long-term memory"},
			obj{"name": "users", "description": "The caller, users and API keys"},
			obj{"name": "operations", "description": "Health, readiness, metrics and this document"},
		},
		"paths": paths,
		"components": obj{
			"schemas": g.schemas,
			"securitySchemes": obj{
				"bearer": obj{"type": "http", "scheme": "bearer", "description": "An API key: Authorization: Bearer ck_..."},
			},
			"headers":    componentHeaders,
			"parameters": componentParameters,
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
func operationID(method, pattern string) string {
	p := strings.TrimPrefix(pattern, "/v1")
	p = strings.NewReplacer("{", "", "}", "", ".", "_", "/", "_").Replace(p)
	return strings.ToLower(method) + strings.TrimRight(p, "_")
}

// operation describes one route served under method (the route's own, or HEAD for a GET route).
func (g *schemaGen) operation(rt *Route, method string) obj {
	summary := rt.Summary
	if method == http.MethodHead {
		summary = "Headers of GET " + rt.Pattern
	}
	op := obj{"operationId": operationID(method, rt.Pattern), "summary": summary, "tags": []string{tagOf(rt.Pattern)}}
	if method == http.MethodHead {
		op["description"] = "The status and headers GET " + rt.Pattern + " would answer (" + rt.Summary + "); no body is sent."
	}
	if rt.AliasOf != "" {
		op["deprecated"] = true
		op["description"] = "The older path of " + rt.AliasOf + ", kept as an alias for one release: use that one."
	}
	params := []any{obj{"$ref": "#/components/parameters/X-Request-Id"}}
	for _, m := range pathParam.FindAllStringSubmatch(rt.Pattern, -1) {
		params = append(params, obj{"name": m[1], "in": "path", "required": true, "description": pathParamDescription(rt, m[1]), "schema": obj{"type": "string"}})
	}
	for _, p := range rt.Query {
		s := obj{"type": p.Type}
		if p.Format != "" {
			s["format"] = p.Format
		}
		if p.Type == "object" { // name[key]=value
			s["additionalProperties"] = obj{"type": "string"}
			params = append(params, obj{"name": p.Name, "in": "query", "required": p.Required, "description": p.Description,
				"style": "deepObject", "explode": true, "schema": s})
			continue
		}
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
			"description": `The expected session version, "N" (also W/"N" or N), or * for any; a stale one answers 412. Same as expected_version (which answers 409).`})
	}
	if rt.Write {
		params = append(params,
			obj{"name": "Idempotency-Key", "in": "header", "schema": obj{"type": "string", "maxLength": carryon.MaxRequestIDLength},
				"description": "Makes the write safe to retry: a repeat answers the first response with Idempotent-Replayed: true. Same as request_id."})
	}
	if isType[carryon.SessionView](rt.Response) {
		params = append(params, obj{"name": "If-None-Match", "in": "header", "schema": obj{"type": "string"},
			"description": `Versions the client has, "N" (comma-separated, or *); answers 304 when the session is still at one of them.`})
	}
	if rt.Pattern == "/v1/runs/{id}/events" {
		params = append(params, obj{"name": "Last-Event-ID", "in": "header", "schema": obj{"type": "string", "pattern": "^ *[0-9]+ *$"},
			"description": "The id of the last event the client has (EventSource sends it when it reconnects); wins over `after`."})
	}
	op["parameters"] = params
	if method != http.MethodHead {
		if body := g.requestBody(rt); body != nil {
			op["requestBody"] = body
		}
	}
	op["responses"] = g.responses(rt)
	if rt.Auth == AuthPublic {
		op["security"] = []any{}
	}
	return op
}

// pathParamDescription says what a path wildcard names.
func pathParamDescription(rt *Route, name string) string {
	switch {
	case rt.SessionScoped:
		return "the session id"
	case strings.HasPrefix(rt.Pattern, "/v1/users/"):
		return "a user id or name"
	case strings.HasPrefix(rt.Pattern, "/v1/keys/"):
		return "a key id"
	case strings.HasPrefix(rt.Pattern, "/v1/runs/"):
		return "the run id"
	case name == "namespace":
		return "a namespace: dot-separated segments of a-z, 0-9, _ and -"
	case name == "key":
		return "a key: 1 to 200 characters of A-Z, a-z, 0-9, _ . : @ -"
	}
	return "an id"
}

// requestBody describes what a route reads, or nil when it reads no body.
func (g *schemaGen) requestBody(rt *Route) obj {
	if rt.Request == nil {
		if !rt.BodyOptional {
			return nil
		}
		// A route that reads an optional body but takes nothing in it (cancel): at most {}.
		return obj{"required": false, "content": obj{mediaJSON: obj{"schema": obj{"type": "object", "maxProperties": 0,
			"description": "nothing: an empty body or an empty object"}}}}
	}
	if isType[importBody](rt.Request) {
		lines := obj{"schema": obj{"type": "string", "description": "a session bundle: JSON Lines, a header, the session's rows, an end line with the checksum (docs/EXPORT.md)"}}
		return obj{"required": true, "content": obj{mediaNDJSON: lines, mediaJSONL: lines,
			mediaJSON: obj{"schema": obj{"description": "OpenAI conversation items: the list object of GET /v1/conversations/{id}/items, several concatenated, or an array of them"}}}}
	}
	content := obj{mediaJSON: obj{"schema": g.ref(reflect.TypeOf(rt.Request))}}
	if isType[wire.WorkingMemoryPatchRequest](rt.Request) {
		content[mediaMergePatch] = obj{"schema": obj{"type": "object", "description": "the merge patch itself"}}
	}
	return obj{"required": !rt.BodyOptional, "content": content}
}

// tagOf groups operations by the first path segment after /v1.
func tagOf(pattern string) string {
	p := strings.Split(strings.TrimPrefix(strings.TrimPrefix(pattern, "/v1"), "/"), "/")
	switch {
	case p[0] == "me" || p[0] == "users" || p[0] == "keys":
		return "users"
	case p[0] == "sessions":
		return "sessions"
	case p[0] == "runs" || p[0] == "chat":
		return "runs"
	case p[0] == "memories":
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
