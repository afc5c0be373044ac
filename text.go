package carryon

import (
	"bytes"
	"encoding/json"
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

// CheckJSONText applies CheckText to every string and every object key of the JSON value raw
// (a NUL arrives in JSON as the escape \u0000), and names the first offending one by its path
// under field, such as metadata.tags[1]. Invalid JSON is not its business: it returns nil for
// it, and the caller's own decoding refuses it.
func CheckJSONText(field string, raw []byte) error {
	if !utf8.Valid(raw) {
		return Errorf(EINVALID, "%s is not valid UTF-8", field)
	}
	if bytes.IndexByte(raw, 0) < 0 && !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil // the common case: no NUL can hide in it
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	if path, ok := findNUL(v, field); ok {
		return Errorf(EINVALID, "%s contains a NUL character", path)
	}
	return nil
}

// findNUL returns the path of the first string or key in v (in key order) that holds a NUL.
func findNUL(v any, path string) (string, bool) {
	switch t := v.(type) {
	case string:
		return path, strings.IndexByte(t, 0) >= 0
	case []any:
		for i, e := range t {
			if p, ok := findNUL(e, path+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
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
				return path + " (a key)", true
			}
			if p, ok := findNUL(t[k], path+"."+k); ok {
				return p, true
			}
		}
	}
	return "", false
}
