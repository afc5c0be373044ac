package carryon

import (
	"bytes"
	"encoding/json"
	"time"
)

// WorkingMemory is a session's small working document: by convention `goal`, `plan` (a list of
// steps with `title` and `status`), `next_action`, `notes` and `open_questions`, plus any free keys.
// It is changed with JSON Merge Patch (RFC 7396) and every change is kept as a revision.
type WorkingMemory map[string]any

// Goal returns the `goal` string, or "".
func (m WorkingMemory) Goal() string { s, _ := m["goal"].(string); return s }

// NextAction returns the `next_action` string, or "".
func (m WorkingMemory) NextAction() string { s, _ := m["next_action"].(string); return s }

// MergePatch applies an RFC 7396 JSON Merge Patch to target (values as encoding/json decodes
// them; numbers best as json.Number, so they are kept exactly). It changes target's maps in place
// and returns the result: a patch that is not an object replaces target, a null member deletes
// its key.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = MergePatch(t[k], v)
	}
	return t
}

// WorkingMemoryState is the working memory of a session with the versions it is at.
type WorkingMemoryState struct {
	SessionID string `json:"session_id"`
	// Version is the session version (use it as expected_version).
	Version int64 `json:"version"`
	// WorkingMemoryVersion numbers the revisions of this document: 0 before the first change.
	WorkingMemoryVersion int64         `json:"memory_version"`
	WorkingMemory        WorkingMemory `json:"working_memory"`
}

// WorkingMemoryPatch is the input of SessionService.PatchWorkingMemory.
type WorkingMemoryPatch struct {
	// Patch is a JSON Merge Patch: an object whose null members delete keys.
	Patch json.RawMessage `json:"patch"`
	// Fence, set by a runner, names the run making the change (see AppendInput.Fence).
	Fence *RunFence `json:"-"`
	WriteOptions
}

// WorkingMemoryRevision is one stored change of a working memory document.
type WorkingMemoryRevision struct {
	SessionID            string          `json:"session_id"`
	WorkingMemoryVersion int64           `json:"memory_version"`
	Version              int64           `json:"version"`
	Patch                json.RawMessage `json:"patch"`
	Document             WorkingMemory   `json:"document"`
	RunID                string          `json:"run_id,omitempty"`
	CreatedAt            time.Time       `json:"created_at"`
}

// RevisionFilter pages through revisions, newest first.
type RevisionFilter struct {
	// Cursor is the NextCursor of the previous page.
	Cursor string `json:"cursor,omitempty"`
	// BeforeWorkingMemoryVersion starts before that memory version: an alias of Cursor, which is the
	// memory version of the last revision of the previous page. Give one of them.
	BeforeWorkingMemoryVersion int64 `json:"before,omitempty"`
	Limit                      int   `json:"limit,omitempty"`
}

// RevisionPage is one page of revisions.
type RevisionPage struct {
	Items      []*WorkingMemoryRevision `json:"items"`
	NextCursor string                   `json:"next_cursor,omitempty"`
}

// WorkingMemoryDiff lists what changed between two revisions, path by path.
type WorkingMemoryDiff struct {
	From    int64               `json:"from"`
	To      int64               `json:"to"`
	Changes []WorkingMemoryEdit `json:"changes"`
}

// WorkingMemoryEdit is one change of a diff: Path is a JSON Pointer; Op is added, removed or changed.
type WorkingMemoryEdit struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
}

// UnmarshalJSON decodes a working memory document with its numbers as json.Number, so that an
// integer above 2^53 (or any number) comes back exactly as it was written instead of rounded
// through float64. Code reading a number from the document gets a json.Number.
func (m *WorkingMemory) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*m = v
	return nil
}
