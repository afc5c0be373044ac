package jsongate

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner walks one JSON value, keeping the path it is at for error messages.
type scanner struct {
	data  []byte
	pos   int
	depth int // objects and arrays open at pos
}

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

// where names the value at path in a sentence: field "metadata.k", or the request body.
func where(path []string) string {
	if len(path) == 0 {
		return "the request body"
	}
	return "field " + strconv.Quote(pathString(path))
}

func (s *scanner) malformed() error {
	return &Error{msg: "malformed JSON at byte " + strconv.Itoa(s.pos)}
}

func (s *scanner) space() {
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
func (s *scanner) value(t reflect.Type, path []string) error {
	if s.pos >= len(s.data) {
		return s.malformed()
	}
	t = plainType(t)
	switch s.data[s.pos] {
	case '{', '[':
		if s.depth++; s.depth > MaxDepth {
			at := path
			if len(at) > 8 {
				at = append(at[:8:8], "…")
			}
			return &Error{Path: pathString(path), msg: fmt.Sprintf("%s is nested more than %d levels deep: carryon takes JSON up to %d levels of objects and arrays, which every mainstream JSON client can read back", where(at), MaxDepth, MaxDepth)}
		}
		defer func() { s.depth-- }()
		if s.data[s.pos] == '{' {
			return s.object(t, path)
		}
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return s.array(elem, path)
	case '"':
		_, err := s.str(path, false)
		return err
	}
	start := s.pos
	for s.pos < len(s.data) && strings.IndexByte(",]} \t\r\n", s.data[s.pos]) < 0 {
		s.pos++
	}
	lit := string(s.data[start:s.pos])
	switch {
	case lit == "true", lit == "false", lit == "null":
		return nil
	case lit == "" || lit[0] != '-' && (lit[0] < '0' || lit[0] > '9'):
		s.pos = start
		return s.malformed()
	}
	return checkNumber(path, lit)
}

// checkNumber refuses a number beyond the range of a 64-bit float (about ±1.8e308). A number
// too small to tell from zero is kept as written.
func checkNumber(path []string, lit string) error {
	if _, err := strconv.ParseFloat(lit, 64); errors.Is(err, strconv.ErrRange) {
		if len(lit) > 40 {
			lit = lit[:37] + "..."
		}
		return errorAt(path, "%s is the number %s, beyond the range of a 64-bit float (about ±1.8e308): send a smaller number, or the value as a string", where(path), lit)
	}
	return nil
}

func (s *scanner) array(elem reflect.Type, path []string) error {
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
		if more, err := s.more(']'); !more {
			return err
		}
	}
}

func (s *scanner) object(t reflect.Type, path []string) error {
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
		name, err := s.str(path, true)
		if err != nil {
			return err
		}
		if seen[name] {
			at := append(path, name)
			if len(path) == 0 {
				return errorAt(at, "duplicate field %q: each name may appear once in an object", name)
			}
			return errorAt(at, "duplicate field %q in %s: each name may appear once in an object", name, pathString(path))
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
		if more, err := s.more('}'); !more {
			return err
		}
	}
}

// unknownField explains a name that is no field of the struct: with a field of the same name in
// another case, it says that names are case-sensitive.
func unknownField(name string, fields map[string]reflect.Type, path []string) error {
	in := ""
	if len(path) > 0 {
		in = " in " + pathString(path)
	}
	e := errorAt(append(path, name), "unknown field %q%s", name, in)
	e.Unknown = true
	for f := range fields {
		if strings.EqualFold(f, name) {
			e.Suggest = f
			e.msg += ": field names are case-sensitive; did you mean " + strconv.Quote(f) + "?"
			break
		}
	}
	return e
}

// str scans a string at s.pos and returns its text (name: it is an object's name, inside the
// object at path). Invalid UTF-8, a NUL and a \u escape of a lone surrogate are refused.
func (s *scanner) str(path []string, name bool) (string, error) {
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
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && n <= 1 {
				return "", textError(path, name, "is not valid UTF-8")
			}
			if b != nil {
				b = append(b, s.data[s.pos:s.pos+n]...)
			}
			s.pos += n
			continue
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
			if r == 0 {
				return "", textError(path, name, "contains a NUL character")
			}
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if r < 0xDC00 && s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					s.pos += 2
					if r2, ok2 = s.hex4(); !ok2 {
						return "", s.malformed()
					}
				}
				d := utf16.DecodeRune(r, r2)
				if d == utf8.RuneError {
					return "", loneSurrogate(path, name, r)
				}
				r = d
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", s.malformed()
		}
	}
	return "", s.malformed()
}

// loneSurrogate refuses the \u escape of a lone surrogate r in a string or name at path.
func loneSurrogate(path []string, name bool, r rune) *Error {
	w := where(path)
	if name {
		w = "a name in " + w
	}
	return &Error{Path: pathString(path), msg: fmt.Sprintf("%s holds \\u%04x, a lone UTF-16 surrogate: JSON text must be valid Unicode (a surrogate is only valid as half of a pair)", w, r)}
}

// textError refuses the text of a string at path, or of a name in the object at path: what
// says why ("contains a NUL character"). The sentence names the value as the services do
// (messages[2].content contains a NUL character).
func textError(path []string, name bool, what string) *Error {
	at := pathString(path)
	switch {
	case name && at == "":
		at = "a name in the request body"
	case name:
		at = "a name in " + at
	case at == "":
		at = "the request body"
	}
	return &Error{Path: pathString(path), msg: at + " " + what}
}

// hex4 reads the four hex digits of a \u escape.
func (s *scanner) hex4() (rune, bool) {
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

// more reads what follows an element or a member: a comma (more to come: true) or closer (the
// end: false, nil); anything else is malformed.
func (s *scanner) more(closer byte) (bool, error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, s.malformed()
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return true, nil
	case closer:
		s.pos++
		return false, nil
	}
	return false, s.malformed()
}
