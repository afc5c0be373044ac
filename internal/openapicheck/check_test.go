package openapicheck

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// doc is a small document with what the checker reads: a path with a wildcard, a literal path
// beside it, declared headers, a JSON body and an event stream.
const doc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/things/{id}": {
      "get": {"responses": {
        "200": {"description": "ok",
          "headers": {"ETag": {"$ref": "#/components/headers/ETag"}, "X-Opt": {"schema": {"type": "string", "enum": ["yes"]}}},
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
        "204": {"description": "nothing"},
        "default": {"description": "any", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
      }}
    },
    "/things/special": {
      "get": {"responses": {"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}}}
    },
    "/events": {
      "get": {"responses": {"200": {"description": "stream", "content": {"text/event-stream": {"schema": {"type": "string"},
        "x-event-schema": {"type": "object", "required": ["id", "event", "data"], "additionalProperties": false, "properties": {
          "id": {"type": "string"}, "event": {"const": "tick"}, "data": {"$ref": "#/components/schemas/Thing"}}}}}}}}
    }
  },
  "components": {
    "headers": {"ETag": {"required": true, "schema": {"type": "string", "pattern": "^\"[0-9]+\"$"}}},
    "schemas": {
      "Thing": {"type": "object", "required": ["id", "at"], "additionalProperties": false,
        "properties": {"id": {"type": "string"}, "at": {"type": "string", "format": "date-time"}}},
      "Problem": {"type": "object", "required": ["code"], "properties": {"code": {"type": "string"}}}
    }
  }
}`

func newChecker(t *testing.T) *Checker {
	t.Helper()
	c, err := New([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const thing = `{"id":"t1","at":"2026-01-02T03:04:05Z"}`

// Each answer is accepted or refused as the document says, with the reason in the error.
func TestCheck(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	json := hdr("Content-Type", "application/json; charset=utf-8", "ETag", `"3"`)
	for _, tc := range []struct {
		name   string
		a      Answer
		reason string // "" when the answer matches
	}{
		{"declared answer", Answer{"GET", "/things/t1", 200, json, []byte(thing)}, ""},
		{"a method the path does not have", Answer{"HEAD", "/things/t1", 200, json, nil}, "has no HEAD for this path"},
		{"no body where none is declared", Answer{"GET", "/things/t1", 204, hdr(), nil}, ""},
		{"a body where none is declared", Answer{"GET", "/things/t1", 204, hdr(), []byte("x")}, "declares no content"},
		{"undeclared status, default does not count", Answer{"GET", "/things/t1", 500, hdr("Content-Type", "application/problem+json"), []byte(`{"code":"x"}`)}, "status 500 is not declared (declared: 200, 204, default)"},
		{"missing required header", Answer{"GET", "/things/t1", 200, hdr("Content-Type", "application/json"), []byte(thing)}, "required header ETag is missing"},
		{"header out of its schema", Answer{"GET", "/things/t1", 200, hdr("Content-Type", "application/json", "ETag", "3"), []byte(thing)}, "header ETag"},
		{"optional header out of its schema", Answer{"GET", "/things/t1", 200, hdr("Content-Type", "application/json", "ETag", `"3"`, "X-Opt", "no"), []byte(thing)}, "header X-Opt"},
		{"undeclared content type", Answer{"GET", "/things/t1", 200, hdr("Content-Type", "text/html", "ETag", `"3"`), []byte(thing)}, `Content-Type "text/html" is not declared`},
		{"missing property", Answer{"GET", "/things/t1", 200, json, []byte(`{"id":"t1"}`)}, "missing property 'at'"},
		{"undeclared property", Answer{"GET", "/things/t1", 200, json, []byte(`{"id":"t1","at":"2026-01-02T03:04:05Z","x":1}`)}, "additional properties 'x'"},
		{"format asserted", Answer{"GET", "/things/t1", 200, json, []byte(`{"id":"t1","at":"yesterday"}`)}, "date-time"},
		{"not JSON", Answer{"GET", "/things/t1", 200, json, []byte(`{"id":`)}, "not JSON"},
		{"literal path wins over the wildcard", Answer{"GET", "/things/special", 200, hdr("Content-Type", "text/plain"), []byte("hi")}, ""},
		{"unknown path answered 404 problem", Answer{"GET", "/nothing", 404, hdr("Content-Type", "application/problem+json"), []byte(`{"code":"not_found"}`)}, ""},
		{"unknown path answered 200", Answer{"GET", "/nothing", 200, hdr("Content-Type", "application/json"), []byte(`{}`)}, "must be 404"},
		{"unknown path answered a bad problem", Answer{"GET", "/nothing", 404, hdr("Content-Type", "application/problem+json"), []byte(`{}`)}, "missing property 'code'"},
		{"unknown method answered 405 with Allow", Answer{"POST", "/things/t1", 405, hdr("Content-Type", "application/problem+json", "Allow", "GET"), []byte(`{"code":"method_not_allowed"}`)}, ""},
		{"unknown method answered without Allow", Answer{"POST", "/things/t1", 405, hdr("Content-Type", "application/problem+json"), []byte(`{"code":"x"}`)}, "no Allow header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Check(tc.a)
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && err == nil:
				t.Fatalf("accepted, want refused for %q", tc.reason)
			case tc.reason != "" && !strings.Contains(err.Error(), tc.reason):
				t.Fatalf("refused with %v, want the reason %q", err, tc.reason)
			}
		})
	}
}

// The transport checks what a real server answers, hands the body on intact, and checks an event
// stream event by event as it is read.
func TestTransport(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": keepalive\n\nid: 1\nevent: tick\ndata: %s\n\n", thing)
			fmt.Fprint(w, "id: 2\nevent: tock\ndata: {\"id\":\"t2\",\n")
			fmt.Fprint(w, "data: \"at\":\"2026-01-02T03:04:05Z\"}\n\n")
			fmt.Fprint(w, "id: 3\nevent: tick\ndata: {\"id\":\"t3\"}\n\n")
		case "/things/good":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("ETag", `"1"`)
			fmt.Fprint(w, thing)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, thing) // no ETag
		}
	}))
	defer srv.Close()
	var mu sync.Mutex
	var reports []string
	client := &http.Client{Transport: c.Transport(nil, func(_ *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	})}
	get := func(path string) string {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if body := get("/things/good"); body != thing || len(reports) != 0 {
		t.Fatalf("good answer: body %q, reports %q", body, reports)
	}
	if body := get("/things/bad"); body != thing || len(reports) != 1 || !strings.Contains(reports[0], "GET /things/{id}") || !strings.Contains(reports[0], "ETag") {
		t.Fatalf("bad answer: body %q, reports %q", body, reports)
	}
	reports = nil
	body := get("/events")
	if !strings.Contains(body, "id: 3") {
		t.Fatalf("stream body %q", body)
	}
	if len(reports) != 2 || !strings.Contains(reports[0], `"tock"`) || !strings.Contains(reports[1], "missing property 'at'") {
		t.Fatalf("stream reports = %q, want the tock event and event 3", reports)
	}
}
