package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/tool"
)

// editor records patches and merges top-level keys (enough for these tests).
type editor struct {
	patches []string
	doc     carryon.WorkingMemory
}

func (e *editor) PatchWorkingMemory(_ context.Context, patch json.RawMessage) (carryon.WorkingMemory, error) {
	e.patches = append(e.patches, string(patch))
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	for k, v := range p {
		if v == nil {
			delete(e.doc, k)
		} else {
			e.doc[k] = v
		}
	}
	return e.doc, nil
}

func TestUpdateWorkingMemory(t *testing.T) {
	t.Parallel()
	m := tool.UpdateWorkingMemory()
	if m.Name() != "update_working_memory" || m.Effect() != carryon.EffectIdempotent {
		t.Fatalf("name %s effect %s", m.Name(), m.Effect())
	}
	r, err := tool.NewRegistry(m)
	if err != nil {
		t.Fatal(err)
	}
	ed := &editor{doc: carryon.WorkingMemory{"goal": "old", "notes": []any{"n1"}}}
	patch := `{"goal":"ship it","plan":[{"title":"write","status":"doing"}],"notes":null,"custom":1}`
	res, err := r.Invoke(context.Background(), "update_working_memory",
		tool.Call{Args: json.RawMessage(`{"patch":` + patch + `}`), WorkingMemory: ed})
	if err != nil {
		t.Fatal(err)
	}
	if len(ed.patches) != 1 || ed.patches[0] != patch {
		t.Fatalf("editor got %q, want %q", ed.patches, patch)
	}
	var doc carryon.WorkingMemory
	if err := json.Unmarshal([]byte(res.Content), &doc); err != nil {
		t.Fatalf("result is not JSON: %q", res.Content)
	}
	if doc.Goal() != "ship it" || doc["notes"] != nil || doc["custom"] != json.Number("1") || doc["plan"] == nil {
		t.Fatalf("result document = %v", doc)
	}
	if res.FingerprintAfter != tool.Fingerprint([]byte(res.Content)) {
		t.Fatalf("FingerprintAfter = %s", res.FingerprintAfter)
	}
}

func TestUpdateWorkingMemoryWithoutEditor(t *testing.T) {
	t.Parallel()
	_, err := tool.UpdateWorkingMemory().Call(context.Background(), tool.Call{Args: json.RawMessage(`{"patch":{"goal":"x"}}`)})
	if err == nil {
		t.Fatal("no error without a memory editor")
	}
}
