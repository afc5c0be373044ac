package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// schemaGen derives JSON Schemas from Go types the way encoding/json encodes them: json tags name
// properties, fields without omitempty are required, embedded structs are flattened. Named
// structs become components (referenced with $ref), so the document follows the types.
type schemaGen struct {
	schemas obj
}

// enums lists the values of the string types that have a fixed set.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[carryon.SessionStatus](): {string(carryon.SessionActive), string(carryon.SessionClosed), string(carryon.SessionExpired)},
	reflect.TypeFor[carryon.Role]():          {string(carryon.RoleSystem), string(carryon.RoleUser), string(carryon.RoleAssistant), string(carryon.RoleTool)},
}

// ref returns the schema of t: a $ref for a named struct (defined once), inline otherwise.
func (g *schemaGen) ref(t reflect.Type) obj {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return obj{"type": "string", "format": "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return obj{"description": "any JSON value"}
	case reflect.TypeFor[carryon.WorkingMemory]():
		return obj{"type": "object", "additionalProperties": true,
			"description": "goal, plan, next_action, notes, open_questions and any free keys"}
	}
	if vals, ok := enums[t]; ok {
		return obj{"type": "string", "enum": vals}
	}
	switch t.Kind() {
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.object(t)
		}
		if _, ok := g.schemas[name]; !ok {
			g.schemas[name] = obj{} // placeholder: stops recursion
			g.schemas[name] = g.object(t)
		}
		return obj{"$ref": "#/components/schemas/" + name}
	case reflect.Slice, reflect.Array:
		return obj{"type": "array", "items": g.ref(t.Elem())}
	case reflect.Map:
		return obj{"type": "object", "additionalProperties": g.ref(t.Elem())}
	case reflect.String:
		return obj{"type": "string"}
	case reflect.Bool:
		return obj{"type": "boolean"}
	case reflect.Int64, reflect.Uint64:
		return obj{"type": "integer", "format": "int64"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return obj{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return obj{"type": "number"}
	}
	return obj{} // interface{}: any JSON value
}

// object is the schema of a struct's JSON object.
func (g *schemaGen) object(t reflect.Type) obj {
	props, required := obj{}, []string{}
	g.fields(t, props, &required)
	s := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fields adds the JSON properties of struct t, flattening embedded structs as encoding/json does.
func (g *schemaGen) fields(t reflect.Type, props obj, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.ref(f.Type)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}
