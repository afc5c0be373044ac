package tool

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/carryon-hub/carryon"
)

// workingMemorySchema describes a merge patch of the working memory with its conventional keys. Each may
// be null, which deletes it; other keys are allowed and stored as they are.
const workingMemorySchema = `{
  "type": "object",
  "properties": {
    "patch": {
      "type": "object",
      "description": "A JSON Merge Patch (RFC 7396) of the working memory: keys set here replace the stored ones, a null deletes a key, keys left out stay as they are. Arrays (plan, notes, open_questions) are replaced as a whole, so send the full list.",
      "properties": {
        "goal": {"type": ["string", "null"], "description": "What the session is trying to achieve."},
        "plan": {
          "type": ["array", "null"],
          "description": "The steps towards the goal, in order.",
          "items": {
            "type": "object",
            "properties": {
              "title": {"type": "string", "description": "What the step does."},
              "status": {"type": "string", "enum": ["todo", "doing", "done"]}
            },
            "required": ["title", "status"]
          }
        },
        "next_action": {"type": ["string", "null"], "description": "The very next thing to do."},
        "notes": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Facts worth keeping."},
        "open_questions": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Questions still to answer."}
      }
    }
  },
  "required": ["patch"],
  "additionalProperties": false
}`

type updateWorkingMemory struct{}

// UpdateWorkingMemory returns the built-in update_working_memory tool. It applies a merge patch to
// the session's working memory through Call.Memory and returns the new document as JSON. It is
// idempotent: the same merge patch applied twice gives the same document.
func UpdateWorkingMemory() Tool { return updateWorkingMemory{} }

func (updateWorkingMemory) Name() string { return "update_working_memory" }

func (updateWorkingMemory) Description() string {
	return "Update the session's working memory (goal, plan, next_action, notes, open_questions) with a JSON Merge Patch. " +
		"Keep it current: it is what you will see of this task when the conversation is long or resumed later. " +
		"Returns the whole working memory after the change."
}

func (updateWorkingMemory) Schema() json.RawMessage { return json.RawMessage(workingMemorySchema) }

func (updateWorkingMemory) Effect() carryon.EffectClass { return carryon.EffectIdempotent }

func (updateWorkingMemory) Call(ctx context.Context, c Call) (Result, error) {
	if c.WorkingMemory == nil {
		return Result{}, carryon.Errorf(carryon.EUNAVAILABLE, "update_working_memory: this session offers no working memory")
	}
	var args struct {
		Patch json.RawMessage `json:"patch"`
	}
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return Result{}, carryon.Errorf(carryon.EINVALID, "update_working_memory: the arguments are not valid JSON: %v", err)
	}
	patch := bytes.TrimSpace(args.Patch)
	if len(patch) == 0 || patch[0] != '{' {
		return Result{}, carryon.Errorf(carryon.EINVALID, `update_working_memory: field "patch" must be an object`)
	}
	doc, err := c.WorkingMemory.PatchWorkingMemory(ctx, patch)
	if err != nil {
		return Result{}, err
	}
	if doc == nil {
		doc = carryon.WorkingMemory{}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return Result{}, err
	}
	return Result{Content: string(out), FingerprintAfter: Fingerprint(out)}, nil
}
