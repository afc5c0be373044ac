// Package longtermtool holds the agent's long-term memory tools: remember (store a fact or preference
// of the user under a namespace and key) and recall (search them). Both act for the session's
// owner only: they call the carryon.LongTermService in tool.Call with a context that carries the
// owner (tool.Call.OwnerID), and refuse a context that carries anyone else.
//
// They never touch the database; the memory service decides and validates.
package longtermtool

import (
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// DefaultNamespace is where remember stores an item when no namespace is given.
const DefaultNamespace = "notes"

// Tools returns remember and recall.
func Tools() []tool.Tool { return []tool.Tool{Remember(), Recall()} }

// ownerContext returns ctx carrying the session's owner, or an error when the call offers no
// memory or its context belongs to another user.
func ownerContext(ctx context.Context, name string, c tool.Call) (context.Context, error) {
	if c.LongTerm == nil {
		return nil, carryon.Errorf(carryon.EUNAVAILABLE, "%s: this agent has no long-term memory", name)
	}
	u := carryon.UserIDFromContext(ctx)
	switch {
	case c.OwnerID == "" && u == "":
		return nil, carryon.Errorf(carryon.EUNAUTHORIZED, "%s: the call names no user", name)
	case c.OwnerID == "":
		return ctx, nil
	case u != "" && u != c.OwnerID:
		return nil, carryon.Errorf(carryon.EFORBIDDEN, "%s: the call runs for another user than the session's owner", name)
	case u == "":
		return carryon.NewContextWithUser(ctx, &carryon.User{ID: c.OwnerID}), nil
	}
	return ctx, nil
}

const rememberSchema = `{
  "type": "object",
  "properties": {
    "namespace": {"type": "string", "pattern": "^[a-z0-9_-]+(\\.[a-z0-9_-]+)*$", "maxLength": 200,
      "description": "Where to file it: dot-separated segments of a-z, 0-9, _ and -, such as prefs or projects.alpha (default notes)."},
    "key": {"type": "string", "pattern": "^[A-Za-z0-9_.:@-]+$", "minLength": 1, "maxLength": 200,
      "description": "A short stable name for the fact, such as editor or deploy-day; the same key replaces the old value. Without a key, the text is the fact: it updates a near duplicate in the namespace, or is added under a key the server chooses."},
    "value": {"description": "The fact as any JSON value (required with a key; default the text)."},
    "text": {"type": "string", "maxLength": 8192, "description": "The fact in one sentence; this is what recall searches."}
  },
  "anyOf": [{"required": ["key", "value"]}, {"required": ["text"]}],
  "additionalProperties": false
}`

type remember struct{}

// Remember returns the remember tool: it stores a value under (namespace, key) in the session
// owner's long-term memory. It is idempotent: storing the same value again changes nothing a
// reader sees.
func Remember() tool.Tool { return remember{} }

func (remember) Name() string { return "remember" }

func (remember) Description() string {
	return "Remember a fact or preference of the user across sessions, under a namespace and key. " +
		"Use it when the user states a preference or asks you to remember something. Storing under an existing key replaces it."
}

func (remember) Schema() json.RawMessage { return json.RawMessage(rememberSchema) }

func (remember) Effect() carryon.EffectClass { return carryon.EffectIdempotent }

func (remember) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	ctx, err := ownerContext(ctx, "remember", c)
	if err != nil {
		return tool.Result{}, err
	}
	var args struct {
		Namespace string          `json:"namespace"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		Text      string          `json:"text"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return tool.Result{}, carryon.Errorf(carryon.EINVALID, "remember: the arguments are not valid JSON: %v", err)
	}
	if args.Namespace == "" {
		args.Namespace = DefaultNamespace
	}
	if args.Key == "" {
		// Once per call: a retry of the same call is answered from the first.
		a, err := c.LongTerm.Add(ctx, args.Namespace, carryon.LongTermAdd{Text: args.Text, Value: args.Value,
			RetryOptions: carryon.RetryOptions{RequestID: c.IdempotencyKey}})
		if err != nil {
			return tool.Result{}, err
		}
		res := map[string]any{"remembered": a.Namespace + "/" + a.Key, "value": a.Value}
		if a.ConsolidatedInto != "" {
			res["consolidated_into"] = a.ConsolidatedInto
		}
		out, _ := json.Marshal(res)
		return tool.Result{Content: string(out), FingerprintAfter: tool.Fingerprint(a.Value)}, nil
	}
	if len(args.Value) == 0 {
		return tool.Result{}, carryon.Errorf(carryon.EINVALID, "remember: value is required with a key (without a key, give the fact as text)")
	}
	it, err := c.LongTerm.Put(ctx, args.Namespace, args.Key, carryon.LongTermPut{Value: args.Value, Text: args.Text})
	if err != nil {
		return tool.Result{}, err
	}
	out, _ := json.Marshal(map[string]any{"remembered": it.Namespace + "/" + it.Key, "value": it.Value})
	return tool.Result{Content: string(out), FingerprintAfter: tool.Fingerprint(it.Value)}, nil
}

const recallSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "maxLength": 4096, "description": "What to look for, in words; an empty query lists the newest items."},
    "namespace": {"type": "string", "pattern": "^([a-z0-9_-]+(\\.[a-z0-9_-]+)*)?$", "maxLength": 200,
      "description": "Only this namespace and the namespaces under it."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many items (default 5)."},
    "mode": {"type": "string", "enum": ["hybrid", "semantic", "keyword"], "description": "hybrid (default: words and meaning), semantic (meaning only) or keyword (words only)."},
    "min_score": {"type": "number", "minimum": -1, "maximum": 1, "description": "Leave out results scoring below this."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

type recall struct{}

// Recall returns the recall tool: it searches the session owner's long-term memory and returns
// the best matches as JSON, most relevant first. It only reads.
func Recall() tool.Tool { return recall{} }

func (recall) Name() string { return "recall" }

func (recall) Description() string {
	return "Search what you remembered about the user in earlier sessions (facts, preferences). Returns the best matches, most relevant first, with scores."
}

func (recall) Schema() json.RawMessage { return json.RawMessage(recallSchema) }

func (recall) Effect() carryon.EffectClass { return carryon.EffectRead }

func (recall) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	ctx, err := ownerContext(ctx, "recall", c)
	if err != nil {
		return tool.Result{}, err
	}
	var args carryon.LongTermSearch
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return tool.Result{}, carryon.Errorf(carryon.EINVALID, "recall: the arguments are not valid JSON: %v", err)
	}
	if args.Limit == 0 {
		args.Limit = 5
	}
	res, err := c.LongTerm.Search(ctx, args)
	if err != nil {
		return tool.Result{}, err
	}
	type found struct {
		Namespace string          `json:"namespace"`
		Key       string          `json:"key"`
		Value     json.RawMessage `json:"value"`
		Text      string          `json:"text,omitempty"`
		Score     float64         `json:"score,omitempty"`
	}
	items := []found{}
	for _, it := range res.Items {
		items = append(items, found{it.Namespace, it.Key, it.Value, it.Text, it.Score})
	}
	out, err := json.Marshal(map[string]any{"items": items})
	return tool.Result{Content: string(out)}, err
}
