// Package openapicheck checks HTTP answers against an OpenAPI 3.1 document, for tests: it finds
// the operation of a request by method and path template, requires the answer's status to be
// declared for it (explicitly: `default` does not count), its required headers to be present and
// valid, its Content-Type to be declared, and its body to validate against the declared JSON Schema
// (with github.com/santhosh-tekuri/jsonschema/v6, draft 2020-12, formats asserted). A request
// whose path the document does not have must be answered by a 404 problem, one whose method it
// does not have by a 405 problem with Allow.
//
// Transport wraps an http.RoundTripper so that every answer a test client receives is checked;
// Server-Sent Events are checked event by event as they are read (see x-event-schema). Only
// tests import this package, so it never ships in the binary.
package openapicheck

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL is where the document is registered with the schema compiler; its $refs resolve in it.
const docURL = "mem:///openapi.json"

// Checker holds a compiled OpenAPI document. It is safe for concurrent use.
type Checker struct {
	doc      map[string]any
	paths    []template
	compiler *jsonschema.Compiler

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema // by JSON pointer
}

// template is one path of the document, split into segments; {x} segments match any one segment.
type template struct {
	path     string
	segments []string
	literals int
}

// New compiles an OpenAPI 3.1 document (JSON).
func New(doc []byte) (*Checker, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("openapicheck: the document is not JSON: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok || !strings.HasPrefix(fmt.Sprint(m["openapi"]), "3.1") {
		return nil, errors.New("openapicheck: not an OpenAPI 3.1 document")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, m); err != nil {
		return nil, fmt.Errorf("openapicheck: %w", err)
	}
	ck := &Checker{doc: m, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := m["paths"].(map[string]any)
	for p := range paths {
		t := template{path: p, segments: strings.Split(p, "/")}
		for _, s := range t.segments {
			if !strings.HasPrefix(s, "{") {
				t.literals++
			}
		}
		ck.paths = append(ck.paths, t)
	}
	return ck, nil
}

// Answer is what a check looks at: a request's method and escaped path, and the answer to it.
type Answer struct {
	Method, Path string
	Status       int
	Header       http.Header
	// Body is the whole body; a streamed (text/event-stream) body is checked by the transport.
	Body []byte
}

// Error is a failed check; Route names the operation ("GET /v1/sessions/{id}") or the path when
// the document has none.
type Error struct {
	Route  string
	Status int
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("answer %d to %s does not match the OpenAPI document: %v", e.Status, e.Route, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Check checks a complete answer.
func (c *Checker) Check(a Answer) error {
	resp, route, err := c.response(a.Method, a.Path, a.Status, a.Header)
	if err == nil {
		err = c.checkBody(resp, a)
	}
	if err != nil {
		return &Error{Route: route, Status: a.Status, Err: err}
	}
	return nil
}

// response finds the declared response of an answer and checks its status and headers. It
// returns the JSON pointer of the response object (resolved) and the route.
func (c *Checker) response(method, path string, status int, h http.Header) (string, string, error) {
	tpl, ok := c.match(path)
	if !ok {
		return "", path, c.checkUnmatched(status, h, http.StatusNotFound)
	}
	item, _ := c.doc["paths"].(map[string]any)[tpl].(map[string]any)
	route := method + " " + tpl
	if _, ok := item[strings.ToLower(method)]; !ok {
		if h.Get("Allow") == "" {
			return "", route, fmt.Errorf("the document has no %s for this path, and the answer has no Allow header", method)
		}
		return "", route, c.checkUnmatched(status, h, http.StatusMethodNotAllowed)
	}
	opPtr := "/paths/" + escape(tpl) + "/" + strings.ToLower(method)
	ptr := opPtr + "/responses/" + strconv.Itoa(status)
	resp, err := c.resolve(ptr)
	if err != nil {
		declared, _ := c.node(opPtr + "/responses")
		var codes []string
		for k := range declared.(map[string]any) {
			codes = append(codes, k)
		}
		slices.Sort(codes)
		return "", route, fmt.Errorf("status %d is not declared (declared: %s)", status, strings.Join(codes, ", "))
	}
	if err := c.checkHeaders(resp, h); err != nil {
		return "", route, err
	}
	return resp, route, nil
}

// checkUnmatched checks the answer to a request no operation matches: a problem with want.
func (c *Checker) checkUnmatched(status int, h http.Header, want int) error {
	if status != want {
		return fmt.Errorf("no operation matches, so the answer must be %d, not %d", want, status)
	}
	if mt := mediaType(h); mt != "application/problem+json" {
		return fmt.Errorf("no operation matches, so the answer must be application/problem+json, not %q", mt)
	}
	return nil // its body is checked against Problem by checkBody
}

// checkHeaders requires the response's required headers and validates those present.
func (c *Checker) checkHeaders(resp string, h http.Header) error {
	headers, _ := c.node(resp + "/headers")
	hm, _ := headers.(map[string]any)
	names := make([]string, 0, len(hm))
	for name := range hm {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		hp, err := c.resolve(resp + "/headers/" + escape(name))
		if err != nil {
			return err
		}
		values := h.Values(name)
		if len(values) == 0 {
			if req, _ := c.node(hp + "/required"); req == true {
				return fmt.Errorf("required header %s is missing", name)
			}
			continue
		}
		if len(values) > 1 {
			return fmt.Errorf("header %s is sent %d times", name, len(values))
		}
		if err := c.validate(hp+"/schema", values[0]); err != nil {
			return fmt.Errorf("header %s: %q: %w", name, values[0], err)
		}
	}
	return nil
}

// checkBody checks an answer's body against the content its response declares.
func (c *Checker) checkBody(resp string, a Answer) error {
	if resp == "" { // an unmatched request: a problem
		if a.Method == http.MethodHead {
			return nil
		}
		return c.checkJSON("/components/schemas/Problem", a.Body)
	}
	content, _ := c.node(resp + "/content")
	cm, _ := content.(map[string]any)
	if len(cm) == 0 {
		if len(a.Body) > 0 {
			return fmt.Errorf("the response declares no content, but the answer has %d bytes", len(a.Body))
		}
		return nil
	}
	mt := mediaType(a.Header)
	if _, ok := cm[mt]; !ok {
		var types []string
		for k := range cm {
			types = append(types, k)
		}
		slices.Sort(types)
		return fmt.Errorf("Content-Type %q is not declared (declared: %s)", a.Header.Get("Content-Type"), strings.Join(types, ", "))
	}
	if a.Method == http.MethodHead {
		if len(a.Body) > 0 {
			return fmt.Errorf("a HEAD answer has %d bytes of body", len(a.Body))
		}
		return nil
	}
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return c.checkJSON(resp+"/content/"+escape(mt)+"/schema", a.Body)
	}
	return nil // text: nothing more to check
}

// checkJSON validates a JSON body against the schema at ptr.
func (c *Checker) checkJSON(ptr string, body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("the body is not JSON: %v: %.200q", err, body)
	}
	if err := c.validate(ptr, v); err != nil {
		return fmt.Errorf("%w\nbody: %.2000s", err, body)
	}
	return nil
}

// validate validates v against the schema at the JSON pointer ptr of the document.
func (c *Checker) validate(ptr string, v any) error {
	s, err := c.schema(ptr)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// schema compiles (once) the schema at the JSON pointer ptr.
func (c *Checker) schema(ptr string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + "#" + (&url.URL{Fragment: ptr}).EscapedFragment())
	if err != nil {
		return nil, fmt.Errorf("openapicheck: compiling the schema at %s: %w", ptr, err)
	}
	c.schemas[ptr] = s
	return s, nil
}

// match finds the path template of a request path: the one with the most literal segments among
// those that match.
func (c *Checker) match(path string) (string, bool) {
	segs := strings.Split(path, "/")
	best, bestLiterals := "", -1
	for _, t := range c.paths {
		if len(t.segments) != len(segs) || t.literals <= bestLiterals {
			continue
		}
		ok := true
		for i, s := range t.segments {
			if strings.HasPrefix(s, "{") {
				ok = ok && segs[i] != ""
			} else {
				ok = ok && s == segs[i]
			}
		}
		if ok {
			best, bestLiterals = t.path, t.literals
		}
	}
	return best, best != ""
}

// node returns the value at a JSON pointer of the document.
func (c *Checker) node(ptr string) (any, error) {
	var v any = c.doc
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no %s in the document", ptr)
		}
		if v, ok = m[part]; !ok {
			return nil, fmt.Errorf("no %s in the document", ptr)
		}
	}
	return v, nil
}

// resolve returns the pointer of the object at ptr, following a $ref (responses, headers).
func (c *Checker) resolve(ptr string) (string, error) {
	for range 8 {
		v, err := c.node(ptr)
		if err != nil {
			return "", err
		}
		m, _ := v.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return ptr, nil
		}
		ptr = strings.TrimPrefix(ref, "#")
	}
	return "", fmt.Errorf("$ref chain too long at %s", ptr)
}

// escape escapes one JSON pointer token.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// mediaType is the media type of an answer's Content-Type, without parameters.
func mediaType(h http.Header) string {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return h.Get("Content-Type")
	}
	return mt
}
