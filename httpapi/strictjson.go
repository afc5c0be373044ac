package httpapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/carryon-hub/carryon"
)

// checkStrict enforces what encoding/json lets pass in a request body that it decoded without
// error into a value of type t: a name twice in one object (at any depth; encoding/json keeps
// the last), a lone UTF-16 surrogate in a \u escape (encoding/json replaces it with U+FFFD), a
// number beyond a 64-bit float's range (a json.Number keeps it as written), and a field name
// that matches a field only when case is ignored (encoding/json matches {"Messages": …} to
// messages). Names are compared after unescaping, so "a" and "\u0061" are the same name. body
// must be one JSON value; anything else is reported as malformed.
func checkStrict(body []byte, t reflect.Type) error {
	s := &strictScanner{data: body}
	s.space()
	if err := s.value(t, nil); err != nil {
		return err
	}
	if s.space(); s.pos != len(s.data) {
		return s.malformed()
	}
	return nil
}

// strictScanner walks one JSON value, keeping the path it is at for error messages.
type strictScanner struct {
	data []byte
	pos  int
	// depth bounds the nesting, as encoding/json does.
	depth int
}

const maxStrictDepth = 10000

// pathString renders a path of object names and array indexes as a client writes it:
// messages[2].tool_calls.
func pathString(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if strings.HasPrefix(p, "[") {
			b.WriteString(p)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func (s *strictScanner) malformed() error {
	return carryon.Errorf(carryon.EINVALID, "malformed JSON at byte %d", s.pos)
}

func (s *strictScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value at s.pos that is decoded into type t (nil: any value, unchecked names).
func (s *strictScanner) value(t reflect.Type, path []string) error {
	if s.pos >= len(s.data) {
		return s.malformed()
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxStrictDepth {
		return carryon.Errorf(carryon.EINVALID, "the JSON value is nested more than %d levels deep", maxStrictDepth)
	}
	t = plainType(t)
	switch s.data[s.pos] {
	case '{':
		return s.object(t, path)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return s.array(elem, path)
	case '"':
		_, err := s.str(path)
		return err
	}
	start := s.pos
	for s.pos < len(s.data) && strings.IndexByte(",]} \t\r\n", s.data[s.pos]) < 0 {
		s.pos++
	}
	if s.pos == start {
		return s.malformed()
	}
	if c := s.data[start]; c == '-' || c >= '0' && c <= '9' {
		where := "the request body"
		if len(path) > 0 {
			where = "field " + strconv.Quote(pathString(path))
		}
		return carryon.CheckJSONNumber(where, string(s.data[start:s.pos]))
	}
	return nil
}

func (s *strictScanner) array(elem reflect.Type, path []string) error {
	s.pos++ // [
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.space()
		if err := s.value(elem, append(path, "["+strconv.Itoa(i)+"]")); err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.data) {
			return s.malformed()
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.malformed()
		}
	}
}

func (s *strictScanner) object(t reflect.Type, path []string) error {
	s.pos++ // {
	var fields map[string]reflect.Type
	var elem reflect.Type
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = structFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	seen := map[string]bool{}
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.malformed()
		}
		name, err := s.str(path)
		if err != nil {
			return err
		}
		if seen[name] {
			if len(path) == 0 {
				return carryon.Errorf(carryon.EINVALID, "duplicate field %q: each name may appear once in an object", name)
			}
			return carryon.Errorf(carryon.EINVALID, "duplicate field %q in %s: each name may appear once in an object", name, pathString(path))
		}
		seen[name] = true
		vt := elem
		if fields != nil {
			ft, ok := fields[name]
			if !ok {
				return unknownField(name, fields, path)
			}
			vt = ft
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.malformed()
		}
		s.pos++
		s.space()
		if err := s.value(vt, append(path, name)); err != nil {
			return err
		}
		s.space()
		if s.pos >= len(s.data) {
			return s.malformed()
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.malformed()
		}
	}
}

// unknownField explains a name that is no field of the struct: with a field of the same name in
// another case, it says that names are case-sensitive.
func unknownField(name string, fields map[string]reflect.Type, path []string) error {
	where := ""
	if len(path) > 0 {
		where = " in " + pathString(path)
	}
	for f := range fields {
		if strings.EqualFold(f, name) {
			return carryon.Errorf(carryon.EINVALID, "unknown field %q%s: field names are case-sensitive; did you mean %q?", name, where, f)
		}
	}
	return carryon.Errorf(carryon.EINVALID, "unknown field %q%s", name, where)
}

// str scans a string at s.pos and returns its text; a \u escape of a lone surrogate is refused.
func (s *strictScanner) str(path []string) (string, error) {
	s.pos++ // "
	start := s.pos
	var b []byte // nil until an escape is met
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			out := string(s.data[start:s.pos])
			if b != nil {
				out = string(b)
			}
			s.pos++
			return out, nil
		case c < 0x20:
			return "", s.malformed()
		case c != '\\':
			if b != nil {
				b = append(b, c)
			}
			s.pos++
			continue
		}
		if b == nil {
			b = append([]byte{}, s.data[start:s.pos]...)
		}
		if s.pos+1 >= len(s.data) {
			return "", s.malformed()
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.malformed()
			}
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if r < 0xDC00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					s.pos += 2
					if r2, ok2 = s.hex4(); !ok2 {
						return "", s.malformed()
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
				} else {
					return "", loneSurrogate(r, path)
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", s.malformed()
		}
	}
	return "", s.malformed()
}

// hex4 reads the four hex digits of a \u escape.
func (s *strictScanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	s.pos += 4
	return rune(n), true
}

func loneSurrogate(r rune, path []string) error {
	where := "the request body"
	if len(path) > 0 {
		where = "field " + strconv.Quote(pathString(path))
	}
	return carryon.Errorf(carryon.EINVALID, "%s holds \\u%04x, a lone UTF-16 surrogate: JSON text must be valid Unicode (a surrogate is only valid as half of a pair)", where, r)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// plainType returns the type whose JSON names are checked for a value decoded into t: pointers
// are followed; types that decode themselves (json.RawMessage, carryon.WorkingMemory) and
// interfaces give nil, which checks only duplicates and surrogates below them.
func plainType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// structFields returns the JSON names of a struct's fields as encoding/json sees them (tags,
// embedded structs' fields promoted, "-" left out), with the type each decodes into.
func structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	addFields(t, out, 0)
	fieldCache.Store(t, out)
	return out
}

func addFields(t reflect.Type, out map[string]reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(ft, out, depth+1)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := out[name]; !taken || depth == 0 {
			out[name] = f.Type
		}
	}
}
