package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
)

// Registry is a fixed set of tools, each with its resolved argument schema. It is built once and
// read concurrently; it holds no lock because it never changes.
type Registry struct {
	tools   map[string]Tool
	schemas map[string]*jsonschema.Resolved
	sorted  []Tool
}

// Spec is what the model is told about a tool: its name, description and argument schema.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// NewRegistry returns a registry of tools. It refuses an empty or duplicate name and a schema that
// is not a valid JSON Schema of an object.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]Tool), schemas: make(map[string]*jsonschema.Resolved)}
	for _, t := range tools {
		if t == nil {
			return nil, carryon.Errorf(carryon.EINVALID, "tool registry: nil tool")
		}
		name := t.Name()
		if name == "" {
			return nil, carryon.Errorf(carryon.EINVALID, "tool registry: a tool has an empty name")
		}
		if _, dup := r.tools[name]; dup {
			return nil, carryon.Errorf(carryon.EINVALID, "tool registry: duplicate tool name %q", name)
		}
		rs, err := resolveSchema(t.Schema())
		if err != nil {
			return nil, carryon.Errorf(carryon.EINVALID, "tool registry: tool %q: invalid schema: %v", name, err)
		}
		r.tools[name] = t
		r.schemas[name] = rs
		r.sorted = append(r.sorted, t)
	}
	slices.SortFunc(r.sorted, func(a, b Tool) int { return strings.Compare(a.Name(), b.Name()) })
	return r, nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// List returns the tools sorted by name.
func (r *Registry) List() []Tool { return slices.Clone(r.sorted) }

// Specs returns the model-facing description of every tool, sorted by name.
func (r *Registry) Specs() []Spec {
	specs := make([]Spec, 0, len(r.sorted))
	for _, t := range r.sorted {
		specs = append(specs, Spec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	return specs
}

// Invoke validates c.Args against the schema of the tool called name and then calls it. An unknown
// tool, arguments that are not JSON and arguments that break the schema give an *ArgumentError
// meant to be sent back to the model; empty arguments count as {}. Errors from the tool itself are
// returned as they are.
func (r *Registry) Invoke(ctx context.Context, name string, c Call) (Result, error) {
	t, ok := r.tools[name]
	if !ok {
		return Result{}, &ArgumentError{Tool: name, Message: fmt.Sprintf("unknown tool %q; the available tools are %s",
			name, strings.Join(r.names(), ", "))}
	}
	args := bytes.TrimSpace(c.Args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return Result{}, &ArgumentError{Tool: name, Message: fmt.Sprintf("invalid arguments for %s: not valid JSON: %v", name, err)}
	}
	if err := r.schemas[name].Validate(v); err != nil {
		field, problem := explain(err)
		return Result{}, &ArgumentError{Tool: name, Field: field,
			Message: fmt.Sprintf("invalid arguments for %s: %s", name, problem)}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	c.Args = args
	return t.Call(ctx, c)
}

func (r *Registry) names() []string {
	names := make([]string, 0, len(r.sorted))
	for _, t := range r.sorted {
		names = append(names, t.Name())
	}
	if len(names) == 0 {
		return []string{"(none)"}
	}
	return names
}

// resolveSchema parses and resolves raw, which must describe an object.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("the schema is empty")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf(`the root must have "type": "object", not %q`, s.Type)
	}
	if err := checkTypes(&s, "root"); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// checkTypes refuses type names JSON Schema does not define, which the validator would otherwise
// accept and then fail every call with.
func checkTypes(s *jsonschema.Schema, at string) error {
	if s == nil {
		return nil
	}
	for _, ty := range append([]string{s.Type}, s.Types...) {
		if ty != "" && !slices.Contains(jsonTypes, ty) {
			return fmt.Errorf("%s: unknown type %q", at, ty)
		}
	}
	for name, p := range s.Properties {
		if err := checkTypes(p, at+"/properties/"+name); err != nil {
			return err
		}
	}
	children := map[string]*jsonschema.Schema{"items": s.Items, "additionalProperties": s.AdditionalProperties, "not": s.Not}
	for i, group := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for j, sub := range group {
			children[fmt.Sprintf("%s/%d", []string{"allOf", "anyOf", "oneOf", "prefixItems"}[i], j)] = sub
		}
	}
	for name, sub := range s.Defs {
		children["$defs/"+name] = sub
	}
	for key, sub := range children {
		if err := checkTypes(sub, at+"/"+key); err != nil {
			return err
		}
	}
	return nil
}
