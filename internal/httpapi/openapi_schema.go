package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/wire"
)

// schemaGen derives JSON Schemas from Go types the way encoding/json encodes them: json tags name
// properties, fields without omitempty are required, embedded structs are flattened, a pointer
// without omitempty may be null. Named structs become components (referenced with $ref), so the
// document follows the types. Objects admit no other properties: requests are decoded strictly and
// answers are encoded from these types.
type schemaGen struct {
	schemas obj
	names   map[string]reflect.Type // component name → the type it describes
}

func newSchemaGen() *schemaGen {
	return &schemaGen{schemas: obj{}, names: map[string]reflect.Type{}}
}

// componentNames gives the document's name of the types whose code name differs from it. The
// code says WorkingMemory… and LongTerm… where the public API, older than that split, says
// Memory…; the document keeps its names so that generated clients do not change.
var componentNames = map[reflect.Type]string{
	reflect.TypeFor[carryon.WorkingMemoryDiff]():      "MemoryDiff",
	reflect.TypeFor[carryon.WorkingMemoryEdit]():      "MemoryEdit",
	reflect.TypeFor[carryon.WorkingMemoryRevision]():  "MemoryRevision",
	reflect.TypeFor[wire.WorkingMemoryPatchRequest](): "MemoryPatchRequest",
	reflect.TypeFor[carryon.LongTermItem]():           "MemoryItem",
	reflect.TypeFor[carryon.LongTermPage]():           "MemoryPage",
	reflect.TypeFor[carryon.LongTermPut]():            "MemoryPut",
	reflect.TypeFor[carryon.LongTermResults]():        "MemoryResults",
	reflect.TypeFor[carryon.LongTermSearch]():         "MemorySearch",
}

// enums lists the values of the string types that have a fixed set.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[carryon.SessionStatus](): {string(carryon.SessionActive), string(carryon.SessionClosed), string(carryon.SessionExpired)},
	reflect.TypeFor[carryon.Role]():          {string(carryon.RoleSystem), string(carryon.RoleUser), string(carryon.RoleAssistant), string(carryon.RoleTool)},
	reflect.TypeFor[carryon.RunStatus](): {string(carryon.RunQueued), string(carryon.RunRunning), string(carryon.RunWaitingApproval), string(carryon.RunRequiresAction),
		string(carryon.RunSucceeded), string(carryon.RunFailed), string(carryon.RunCancelled), string(carryon.RunInterrupted)},
	reflect.TypeFor[carryon.EventType](): {string(carryon.EventRunQueued), string(carryon.EventRunStarted), string(carryon.EventModelDelta),
		string(carryon.EventToolStarted), string(carryon.EventToolFinished), string(carryon.EventWorkingMemoryUpdated), string(carryon.EventMessageAppended),
		string(carryon.EventRunWaiting), string(carryon.EventRunRequiresAction), string(carryon.EventRunApproved), string(carryon.EventToolOutputs), string(carryon.EventRunFinished), string(carryon.EventRunFailed)},
	reflect.TypeFor[carryon.ActionStatus](): {string(carryon.ActionPending), string(carryon.ActionStarted), string(carryon.ActionSucceeded),
		string(carryon.ActionFailed), string(carryon.ActionUnknown), string(carryon.ActionSkipped), string(carryon.ActionWaiting)},
	reflect.TypeFor[carryon.EffectClass](): {string(carryon.EffectRead), string(carryon.EffectIdempotent), string(carryon.EffectReconcilable), string(carryon.EffectUnsafe)},
	reflect.TypeFor[carryon.MessageKind](): {string(carryon.KindMessage), string(carryon.KindSummary)},
	reflect.TypeFor[carryon.Multitask]():   {string(carryon.MultitaskReject), string(carryon.MultitaskEnqueue), string(carryon.MultitaskInterrupt)},
	reflect.TypeFor[carryon.Decision](): {string(carryon.DecisionApprove), string(carryon.DecisionReject), string(carryon.DecisionRerun),
		string(carryon.DecisionMarkDone), string(carryon.DecisionSkip)},
	reflect.TypeFor[carryon.ApprovalState](): {string(carryon.ApprovalRequired), string(carryon.ApprovalApproved), string(carryon.ApprovalEdited), string(carryon.ApprovalRejected)},
	reflect.TypeFor[carryon.Executor]():      {string(carryon.ExecutorClient)}, // the server, "", is never sent
	reflect.TypeFor[carryon.IfExists]():      {string(carryon.IfExistsReturn), string(carryon.IfExistsError)},
	reflect.TypeFor[carryon.Door]():          doorNames(),
}

// doorNames are the values of carryon.Door.
func doorNames() []string {
	names := make([]string, len(carryon.Doors))
	for i, d := range carryon.Doors {
		names[i] = string(d)
	}
	return names
}

// Schemas of single fields whose Go type says less than the API promises.
var (
	jsonObject    = obj{"type": "object", "description": "a JSON object"}
	toolCallArray = obj{"type": "array", "items": obj{"$ref": "#/components/schemas/ToolCall"}}
)

// fieldSchemas gives the schema of a field by struct type and JSON name, where the Go type alone
// (a json.RawMessage, a plain string with a fixed set of values) says too little.
var fieldSchemas = map[reflect.Type]map[string]obj{
	reflect.TypeFor[carryon.Session]():       {"metadata": jsonObject},
	reflect.TypeFor[carryon.NewSession]():    {"metadata": jsonObject},
	reflect.TypeFor[carryon.SessionUpdate](): {"metadata": jsonObject},
	reflect.TypeFor[carryon.Message]():       {"metadata": jsonObject, "tool_calls": toolCallArray},
	reflect.TypeFor[carryon.NewMessage]():    {"metadata": jsonObject, "tool_calls": toolCallArray},
	reflect.TypeFor[carryon.ToolCall]():      {"arguments": jsonObject},
	reflect.TypeFor[carryon.ModelToolCall](): {"arguments": jsonObject},
	reflect.TypeFor[carryon.ModelMessage](): {"role": obj{"type": "string",
		"enum": []string{string(carryon.RoleSystem), string(carryon.RoleUser), string(carryon.RoleAssistant), string(carryon.RoleTool)}}},
	reflect.TypeFor[carryon.Action]():            {"args": jsonObject},
	reflect.TypeFor[carryon.Event]():             {"data": jsonObject},
	reflect.TypeFor[carryon.Run]():               {"stop_requested": obj{"type": "string", "enum": []string{"cancel", "interrupt"}}},
	reflect.TypeFor[carryon.WorkingMemoryEdit](): {"op": obj{"type": "string", "enum": []string{"added", "removed", "changed"}}},
	reflect.TypeFor[wire.Health]():               {"status": obj{"type": "string", "enum": []string{"ok", "ready"}}},
	reflect.TypeFor[wire.Problem](): {
		"code":   obj{"type": "string", "enum": problemCodeList()},
		"status": obj{"type": "integer", "minimum": 400, "maximum": 599},
		"type":   obj{"type": "string", "format": "uri"},
	},
}

// problemCodeList is every code a problem can carry, sorted.
func problemCodeList() []string {
	codes := append(wire.Codes(), "method_not_allowed") // the 405 of a path served under other methods
	slices.Sort(codes)
	return codes
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
		name := componentNames[t]
		if name == "" {
			name = t.Name()
		}
		if name == "" {
			return g.object(t)
		}
		if other, ok := g.names[name]; ok && other != t {
			panic(fmt.Sprintf("httpapi: OpenAPI schema %s would describe both %v and %v; name one in componentNames", name, other, t))
		}
		if _, ok := g.schemas[name]; !ok {
			g.names[name] = t
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
	s := obj{"type": "object", "properties": props, "additionalProperties": false}
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
		omitted := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		s, ok := fieldSchemas[t][name]
		if !ok {
			s = g.ref(f.Type)
		}
		if f.Type.Kind() == reflect.Pointer && !omitted {
			s = obj{"anyOf": []any{s, obj{"type": "null"}}}
		}
		props[name] = s
		if !omitted {
			*required = append(*required, name)
		}
	}
}
