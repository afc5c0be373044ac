package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The arguments of the long-term memory tools; their JSON names are the contract.
type (
	rememberArgs struct {
		Namespace string `json:"namespace,omitempty" jsonschema:"dot-separated segments of a-z, 0-9, _ and - such as prefs or projects.alpha (default notes)"`
		Key       string `json:"key,omitempty" jsonschema:"the item's name inside its namespace; without one the server chooses it, or updates a near duplicate of the text in the namespace (consolidated_into)"`
		Value     any    `json:"value,omitempty" jsonschema:"any JSON value (required with a key; without one, default the text)"`
		Text      string `json:"text,omitempty" jsonschema:"what search matches (default: the value's text)"`
		RequestID string `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first and stores nothing again"`
	}
	recallArgs struct {
		Query     string  `json:"query" jsonschema:"free text; its words are matched each on its own (no words: the newest items)"`
		Namespace string  `json:"namespace,omitempty" jsonschema:"only this namespace and the namespaces under it"`
		Limit     int     `json:"limit,omitempty" jsonschema:"how many items at most (default 10)"`
		Mode      string  `json:"mode,omitempty" jsonschema:"hybrid (default: words and meaning), semantic (meaning only) or keyword (words only)"`
		MinScore  float64 `json:"min_score,omitempty" jsonschema:"leave out results scoring below this"`
	}
	forgetArgs struct {
		Namespace string `json:"namespace" jsonschema:"the item's namespace"`
		Key       string `json:"key" jsonschema:"the item's key"`
		RequestID string `json:"request_id,omitempty" jsonschema:"an idempotency key: a retry with the same one is answered from the first (not not_found)"`
	}
)

// forgotten is the result of forget.
type forgotten struct {
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
	Forgotten bool   `json:"forgotten"`
	Replayed  bool   `json:"replayed"`
}

// remembered is the result of remember: the item stored (with, for a fact without a key, the
// item it was consolidated into), and whether it was a replay of an earlier call with the same
// request id.
type remembered struct {
	*carryon.LongTermAdded
	Replayed bool `json:"replayed"`
}

func (s *server) addLongTermTools(srv *mcp.Server) {
	addTool(s, srv, &mcp.Tool{
		Name:        "remember",
		Description: "Store a fact or preference in your long-term memory under a namespace and key, replacing what was there; without a key, the fact updates a near duplicate of it in the namespace or is added. Every session of yours can recall it.",
		// It replaces the item under the key, and the old value is not kept.
		Annotations: hints("Remember", false, true, true),
	}, nil, s.remember)

	addTool(s, srv, &mcp.Tool{
		Name:        "recall",
		Description: "Search your long-term memory, most relevant first.",
		Annotations: hints("Recall", true, true, false),
	}, func(sc *jsonschema.Schema) { bound(sc, "limit", 1, carryon.MaxLongTermSearchLimit) }, s.recall)

	addTool(s, srv, &mcp.Tool{
		Name:        "forget",
		Description: "Delete an item of your long-term memory.",
		Annotations: hints("Forget", false, true, true),
	}, nil, s.forget)
}

func (s *server) remember(ctx context.Context, in rememberArgs) (any, error) {
	if s.longTerm == nil {
		return nil, notImplemented("long-term memory")
	}
	ns := in.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	value, err := json.Marshal(in.Value)
	if err != nil {
		return nil, carryon.Errorf(carryon.EINVALID, "value: %v", err)
	}
	ctx, rc := withReceipt(ctx)
	if in.Key == "" {
		if in.Value == nil {
			value = nil
		}
		a, err := s.longTerm.Add(ctx, ns, carryon.LongTermAdd{Text: in.Text, Value: value, RetryOptions: carryon.RetryOptions{RequestID: in.RequestID}})
		if err != nil {
			return nil, err
		}
		return remembered{LongTermAdded: a, Replayed: rc.Replayed}, nil
	}
	if in.Value == nil {
		return nil, carryon.Errorf(carryon.EINVALID, "value is required with a key (without a key, give the fact as text)")
	}
	it, err := s.longTerm.Put(ctx, ns, in.Key, carryon.LongTermPut{Value: value, Text: in.Text,
		WriteOptions: carryon.WriteOptions{RequestID: in.RequestID}})
	if err != nil {
		return nil, err
	}
	return remembered{LongTermAdded: &carryon.LongTermAdded{LongTermItem: *it}, Replayed: rc.Replayed}, nil
}

func (s *server) recall(ctx context.Context, in recallArgs) (any, error) {
	if s.longTerm == nil {
		return nil, notImplemented("long-term memory")
	}
	res, err := s.longTerm.Search(ctx, carryon.LongTermSearch{Query: in.Query, Namespace: in.Namespace, Limit: in.Limit,
		Mode: carryon.SearchMode(in.Mode), MinScore: in.MinScore})
	if err != nil {
		return nil, err
	}
	res.Items = nonNil(res.Items)
	return res, nil
}

func (s *server) forget(ctx context.Context, in forgetArgs) (any, error) {
	if s.longTerm == nil {
		return nil, notImplemented("long-term memory")
	}
	ctx, rc := withReceipt(ctx)
	if err := s.longTerm.Delete(ctx, in.Namespace, in.Key, carryon.WriteOptions{RequestID: in.RequestID}); err != nil {
		return nil, err
	}
	return forgotten{Namespace: in.Namespace, Key: in.Key, Forgotten: true, Replayed: rc.Replayed}, nil
}
