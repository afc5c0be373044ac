package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// The seed corpora are in testdata/fuzz/<name>/: duplicate names (plain, nested, escaped),
// lone surrogates, integers above 2^53, NUL escapes, names in another case and byte-order marks.

// FuzzDecodeAppend: whatever the body, the append decoder never panics and answers either a
// value or an EINVALID error with a message; what it accepts is one valid JSON value without a
// name twice in an object or a lone surrogate (checked against encoding/json's own tokens), and
// it decodes to the same value again after encoding.
func FuzzDecodeAppend(f *testing.F) {
	s := &server{maxBody: DefaultMaxBodyBytes}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/v1/sessions/x/messages", bytes.NewReader(body))
		r.Header.Set("Content-Type", mediaJSON)
		in, err := decode[wire.AppendRequest](s, r, bodyOptions{})
		if err != nil {
			if code := carryon.ErrorCode(err); code != carryon.EINVALID && code != carryon.ETOOLARGE || carryon.ErrorMessage(err) == "" {
				t.Fatalf("error %v for %q", err, body)
			}
			return
		}
		checkAccepted(t, bytes.TrimPrefix(body, utf8BOM))
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", body, err)
		}
		var back wire.AppendRequest
		if err := unmarshalStrict(again, &back); err != nil {
			t.Fatalf("accepted %q, but not its encoding %s: %v", body, again, err)
		}
		if b, _ := json.Marshal(back); !bytes.Equal(b, again) {
			t.Fatalf("%q decodes to %s, then to %s", body, again, b)
		}
	})
}

// FuzzWorkingMemoryPatch: the memory-patch decoder (application/json with a patch field, or a bare
// application/merge-patch+json body) never panics, refuses with a 4xx error, and accepts only a
// body whose patch is one valid JSON value without duplicate names or lone surrogates.
func FuzzWorkingMemoryPatch(f *testing.F) {
	s := &server{maxBody: DefaultMaxBodyBytes}
	f.Fuzz(func(t *testing.T, body []byte, bare bool) {
		r := httptest.NewRequest("PATCH", "/v1/sessions/x/memory", bytes.NewReader(body))
		r.Header.Set("Content-Type", mediaJSON)
		if bare {
			r.Header.Set("Content-Type", mediaMergePatch)
		}
		in, err := s.decodeWorkingMemoryPatch(r)
		if err != nil {
			if code := carryon.ErrorCode(err); code != carryon.EINVALID && code != carryon.ETOOLARGE || carryon.ErrorMessage(err) == "" {
				t.Fatalf("error %v for %q", err, body)
			}
			return
		}
		checkAccepted(t, bytes.TrimPrefix(body, utf8BOM))
		if !json.Valid(in.Patch) {
			t.Fatalf("accepted %q with a patch that is not JSON: %q", body, in.Patch)
		}
	})
}

// checkAccepted fails when an accepted body is not valid JSON, names a member twice in an
// object, or holds a lone surrogate, which encoding/json's tokenizer shows as a U+FFFD that the
// body did not spell.
func checkAccepted(t *testing.T, body []byte) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("accepted invalid JSON %q", body)
	}
	spelled := bytes.Contains(body, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`))
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next string in this object is a name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("accepted %q, which does not tokenize: %v", body, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: v == '{', names: map[string]bool{}, key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if strings.ContainsRune(v, '\uFFFD') && !spelled {
				t.Fatalf("accepted %q, which holds a lone surrogate", body)
			}
			if top != nil && top.object && top.key {
				if top.names[v] {
					t.Fatalf("accepted %q, which names %q twice in an object", body, v)
				}
				top.names[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
}
