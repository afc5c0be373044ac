package carryon

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckText is the one rule for text that carryon stores, the same on every driver: valid UTF-8
// without a NUL character (PostgreSQL refuses NUL in text; SQLite would keep it, so the rule is
// checked here, before any driver sees the text). field names the value in the error, such as
// messages[2].content. It returns nil or an EINVALID error.
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(EINVALID, "%s contains a NUL character", field)
	}
	return nil
}

// MaxJSONDepth is how deeply objects and arrays may nest in a JSON value carryon stores (every
// door's input gate and CheckJSONText hold it): deep enough for any document people write, and
// shallow enough that every mainstream JSON reader (Python's json stops near 1,000 levels) reads
// the value back inside the answers that carry it.
const MaxJSONDepth = 128

// CheckJSONText applies CheckText to every string and every object key of the JSON value raw
// (a NUL arrives in JSON as the escape \u0000), CheckJSONNumber to every number and MaxJSONDepth
// to its nesting, and names the first offending one by its path under field, such as
// metadata.tags[1]. Invalid JSON is not its business: it returns nil for it, and the caller's own
// decoding refuses it.
func CheckJSONText(field string, raw []byte) error {
	if !utf8.Valid(raw) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if jsonDepth(raw) > MaxJSONDepth {
		return Errorf(EINVALID, "%s is nested more than %d levels deep", field, MaxJSONDepth)
	}
	if bytes.IndexByte(raw, 0) < 0 && !bytes.Contains(raw, []byte(`\u0000`)) && !mayOverflow(raw) {
		return nil // the common case: no NUL can hide in it, no number is that large
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return checkValue(v, field)
}

// CheckJSONNumber refuses a JSON number beyond the range of a 64-bit float (about ±1.8e308),
// such as 1e400: JSON's grammar allows it, but a client that reads numbers as doubles, as most
// do (RFC 8259 section 6), cannot read it back, so carryon does not store it. A number too small
// to tell from zero is kept as written. path names the value in the error.
func CheckJSONNumber(path, literal string) error {
	if _, err := strconv.ParseFloat(literal, 64); errors.Is(err, strconv.ErrRange) {
		if len(literal) > 40 {
			literal = literal[:37] + "..."
		}
		return Errorf(EINVALID, "%s is the number %s, beyond the range of a 64-bit float (about ±1.8e308): send a smaller number, or the value as a string", path, literal)
	}
	return nil
}

// mayOverflow reports whether raw could hold a number beyond a float's range: one with an
// exponent of three digits or more, or a run of more than 308 digits. It looks at bytes, not
// tokens (text inside strings counts too), so it may say yes for a value that holds none.
func mayOverflow(raw []byte) bool {
	run := 0
	for i, c := range raw {
		if c >= '0' && c <= '9' {
			if run++; run > 308 {
				return true
			}
			continue
		}
		run = 0
		if (c == 'e' || c == 'E') && i > 0 && (raw[i-1] >= '0' && raw[i-1] <= '9' || raw[i-1] == '.') {
			j := i + 1
			if j < len(raw) && (raw[j] == '+' || raw[j] == '-') {
				j++
			}
			k := j
			for k < len(raw) && raw[k] >= '0' && raw[k] <= '9' {
				k++
			}
			if k-j >= 3 {
				return true
			}
		}
	}
	return false
}

// checkValue checks the strings, keys and numbers of v (in key order) and reports the first
// that breaks a rule.
func checkValue(v any, path string) error {
	switch t := v.(type) {
	case string:
		if strings.IndexByte(t, 0) >= 0 {
			return Errorf(EINVALID, "%s contains a NUL character", path)
		}
	case json.Number:
		return CheckJSONNumber(path, string(t))
	case []any:
		for i, e := range t {
			if err := checkValue(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.IndexByte(k, 0) >= 0 {
				return Errorf(EINVALID, "%s (a key) contains a NUL character", path)
			}
			if err := checkValue(t[k], path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonDepth is the deepest nesting of objects and arrays in raw, brackets inside strings not
// counted; for invalid JSON it is a guess (the caller's decoding refuses that).
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
