package tool

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/carryon-hub/carryon"
)

// ArgumentError says why a call was refused before it ran: an unknown tool, arguments that are not
// JSON, or arguments that break the tool's schema. Its message is written for the model, so that
// the engine can send it back as the tool result and the model can correct the call.
type ArgumentError struct {
	// Tool is the tool name as the model called it.
	Tool string
	// Field is the offending argument as a path such as "patch.plan[].status"; "" when the problem
	// is the call as a whole.
	Field string
	// Message says what is wrong, naming the tool and the field; it is the whole error text.
	Message string
}

// Error returns the message for the model.
func (e *ArgumentError) Error() string { return e.Message }

// Unwrap returns the same message as an invalid_request *carryon.Error, so carryon.ErrorCode and
// carryon.ErrorMessage work on it.
func (e *ArgumentError) Unwrap() error { return carryon.Errorf(carryon.EINVALID, "%s", e.Error()) }

var (
	quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	typeRE   = regexp.MustCompile(`^type: (.*) has type "(\w+)", want (.*)$`)
	enumRE   = regexp.MustCompile(`(?s)^enum: (.*) does not equal any of: (.*)$`)
)

// explain turns a validation error of the jsonschema package (a chain of "validating <schema
// path>: …" around the failed keyword) into the argument's path and a sentence about it.
func explain(err error) (field, problem string) {
	schemaPath, leaf := "", err.Error()
	for e := err; e != nil; {
		inner := errors.Unwrap(e)
		if inner == nil {
			leaf = e.Error()
			break
		}
		prefix := strings.TrimSuffix(e.Error(), ": "+inner.Error())
		if p, ok := strings.CutPrefix(prefix, "validating "); ok {
			schemaPath = p
		}
		e = inner
	}
	at := fieldPath(schemaPath)
	join := func(name string) string {
		if at == "" {
			return name
		}
		return at + "." + name
	}
	fields := func() (string, []string) {
		var first string
		var list []string
		for _, n := range quoted(leaf) {
			if first == "" {
				first = join(n)
			}
			list = append(list, strconv.Quote(join(n)))
		}
		if len(list) != 1 {
			first = at
		}
		return first, list
	}
	switch {
	case strings.HasPrefix(leaf, "required: missing properties"):
		f, list := fields()
		if len(list) == 1 {
			return f, "missing required field " + list[0]
		}
		return f, "missing required fields " + strings.Join(list, ", ")
	case strings.HasPrefix(leaf, "unexpected additional properties"):
		f, list := fields()
		if len(list) == 1 {
			return f, "unexpected field " + list[0] + " (the schema does not allow it)"
		}
		return f, "unexpected fields " + strings.Join(list, ", ") + " (the schema does not allow them)"
	}
	var what string
	if m := typeRE.FindStringSubmatch(leaf); m != nil {
		var want []string
		for _, q := range quoted(m[3]) {
			want = append(want, strings.Split(q, ", ")...)
		}
		what = fmt.Sprintf("must be of type %s, not %s", strings.Join(want, " or "), m[2])
	} else if m := enumRE.FindStringSubmatch(leaf); m != nil {
		what = fmt.Sprintf("must be one of %s, not %s", m[2], m[1])
	} else {
		what = leaf
	}
	if at == "" {
		return "", "the arguments " + what
	}
	return at, fmt.Sprintf("field %q %s", at, what)
}

// fieldPath turns a schema path like /properties/patch/properties/plan/items/properties/status
// into the argument path patch.plan[].status.
func fieldPath(schemaPath string) string {
	if schemaPath == "" || schemaPath == "root" || !strings.HasPrefix(schemaPath, "/") {
		return ""
	}
	segs := strings.Split(schemaPath[1:], "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch seg := segs[i]; {
		case (seg == "properties" || seg == "patternProperties") && i+1 < len(segs):
			i++
			name := strings.NewReplacer("~1", "/", "~0", "~").Replace(segs[i])
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
		case seg == "items" || seg == "prefixItems":
			b.WriteString("[]")
		case seg == "additionalProperties":
			b.WriteString(".*")
		}
	}
	return b.String()
}

func quoted(s string) []string {
	var out []string
	for _, q := range quotedRE.FindAllString(s, -1) {
		out = append(out, unquote(q))
	}
	return out
}

func unquote(q string) string {
	if s, err := strconv.Unquote(q); err == nil {
		return s
	}
	return q
}
