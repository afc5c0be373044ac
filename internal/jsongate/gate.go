package jsongate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/carryon-hub/carryon"
)

// MaxDepth is how deeply objects and arrays may nest in a value that passes the gate. Python's
// json module reads about 990 levels before its recursion limit, browsers and the other
// mainstream parsers more, encoding/json 10000: 128 leaves room for the few levels an answer adds
// around a stored value (an item list, the item, its metadata) and is far more than any real
// document needs.
const MaxDepth = carryon.MaxJSONDepth

// Error is a refusal of the gate: Error() is a sentence for the client.
type Error struct {
	// Path is where the offending value or name is, as a client writes it
	// (messages[2].tool_calls); empty for the whole value.
	Path string
	// Unknown is set when the refusal is a name the target type has no field for.
	Unknown bool
	// Suggest is, for an unknown name, the field it matches when case is ignored.
	Suggest string
	msg     string
}

// Error returns the sentence that says what is refused and where.
func (e *Error) Error() string { return e.msg }

func errorAt(path []string, format string, args ...any) *Error {
	return &Error{Path: pathString(path), msg: fmt.Sprintf(format, args...)}
}

// Decode decodes exactly one JSON value from data into v (a non-nil pointer) and applies every
// rule of the package, with the field names of v's type: a name the type does not declare
// (also one that matches only when case is ignored) is refused. Numbers decoded into an
// interface are json.Number, so that an integer above 2^53 is kept exactly.
func Decode(data []byte, v any) error {
	if err := scan(data, reflect.TypeOf(v)); err != nil {
		if !json.Valid(data) {
			return decodeError(decodeWith(data, v)) // encoding/json says best what is wrong
		}
		return err
	}
	if err := decodeWith(data, v); err != nil {
		return decodeError(err)
	}
	return nil
}

// decodeWith decodes data into v strictly (unknown fields refused, numbers as json.Number) and
// refuses data after the value.
func decodeWith(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{msg: fmt.Sprintf("the request body must hold exactly one JSON value; found more data after byte %d", dec.InputOffset())}
	}
	return nil
}

// Check applies every rule of the package to the one JSON value data holds, with the field
// names of type t (nil, or a type that decodes itself, checks no names). It does not decode.
func Check(data []byte, t reflect.Type) error {
	if err := scan(data, t); err != nil {
		if !json.Valid(data) {
			var v any
			return decodeError(json.Unmarshal(data, &v)) // encoding/json says best what is wrong
		}
		return err
	}
	return nil
}

// scan checks data against every rule; malformed JSON is refused (as malformed at a byte: the
// callers ask encoding/json then, which says best what is wrong). Valid JSON is read only once on
// the way in: this pass, and the decode.
func scan(data []byte, t reflect.Type) error {
	s := &scanner{data: data}
	s.space()
	if err := s.value(t, nil); err != nil {
		return err
	}
	if s.space(); s.pos != len(s.data) {
		return s.malformed()
	}
	return nil
}

// CheckValue applies every rule of the package but names to free JSON (a json.RawMessage that
// is stored as sent, or decoded into any). An empty value is malformed.
func CheckValue(data []byte) error { return Check(data, nil) }

// decodeError turns an encoding/json error into a message a client can act on.
func decodeError(err error) error {
	var ge *Error
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return &Error{msg: "malformed JSON"}
	case errors.As(err, &ge):
		return ge
	case errors.As(err, &syn):
		return &Error{msg: fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &Error{msg: "malformed JSON: the body ends before the value is complete"}
	case errors.As(err, &typ):
		field := jsonPath(typ.Field)
		if field == "" {
			return &Error{msg: fmt.Sprintf("the request body must be %s in JSON, not %s", jsonKind(typ.Type.Kind()), typ.Value)}
		}
		return &Error{Path: field, msg: fmt.Sprintf("field %q must be %s, not %s", field, jsonKind(typ.Type.Kind()), typ.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return &Error{Path: strings.Trim(name, `"`), Unknown: true, msg: "unknown field " + name}
	}
	return &Error{msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// jsonPath turns the Field of a json.UnmarshalTypeError into the path a client wrote: it drops the
// names of embedded Go structs (such as WriteOptions), which are capitalised, unlike JSON names.
func jsonPath(field string) string {
	var parts []string
	for _, p := range strings.Split(field, ".") {
		if p != "" && (p[0] < 'A' || p[0] > 'Z') {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + k.String()
}
