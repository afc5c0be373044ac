package scripted

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/model"
)

var tools = []model.ToolSpec{{Name: "update_working_memory"}, {Name: "write_file"}, {Name: "read_file"}}

func system(wm carryon.WorkingMemory) string {
	return contextbuild.DefaultSystemPrompt + "\n\n" + contextbuild.HeadingWorkingMemory + "\n" + contextbuild.RenderWorkingMemory(wm)
}

func call(t *testing.T, req model.Request) model.Response {
	t.Helper()
	res, err := model.Collect(New(0).Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestNewTaskSetsGoalPlanAndNextAction(t *testing.T) {
	t.Parallel()
	req := model.Request{System: system(nil), Tools: tools, Messages: []model.Message{
		{Role: "user", Content: "Write the release notes: collect the merged changes, then group them by area, then draft the notes."}}}
	res := call(t, req)
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Name != "update_working_memory" || res.FinishReason != model.FinishToolCalls {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
	var args struct {
		Patch struct {
			Goal       string `json:"goal"`
			NextAction string `json:"next_action"`
			Plan       []step `json:"plan"`
		} `json:"patch"`
	}
	if err := json.Unmarshal(res.ToolCalls[0].Arguments, &args); err != nil {
		t.Fatal(err)
	}
	if args.Patch.Goal != "Write the release notes: collect the merged changes, then group them by area, then draft the notes" && !strings.HasPrefix(args.Patch.Goal, "Write the release notes") {
		t.Fatalf("goal = %q", args.Patch.Goal)
	}
	if len(args.Patch.Plan) != 3 || args.Patch.NextAction != args.Patch.Plan[0].Title || args.Patch.Plan[0].Status != "doing" {
		t.Fatalf("plan = %+v next = %q", args.Patch.Plan, args.Patch.NextAction)
	}
	if again := call(t, req); !reflect.DeepEqual(again, res) {
		t.Fatal("the same request got another answer")
	}
}

func TestContinueAdvancesThePlanAndAnswersWithGoalAndNextAction(t *testing.T) {
	t.Parallel()
	wm := carryon.WorkingMemory{"goal": "Ship the parser", "next_action": "Split the lexer",
		"plan": []any{map[string]any{"title": "Split the lexer", "status": "doing"}, map[string]any{"title": "Write tests", "status": "todo"}}}
	req := model.Request{System: system(wm), Tools: tools, Messages: []model.Message{{Role: "user", Content: "continue the task"}}}
	res := call(t, req)
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Name != "write_file" || !strings.Contains(string(res.ToolCalls[1].Arguments), `"next_action":"Write tests"`) {
		t.Fatalf("calls = %+v", res.ToolCalls)
	}
	// The next step sees the updated memory and the tool results, and answers.
	wm["next_action"] = "Write tests"
	wm["plan"] = []any{map[string]any{"title": "Split the lexer", "status": "done"}, map[string]any{"title": "Write tests", "status": "doing"}}
	req.System = system(wm)
	req.Messages = append(req.Messages, model.Message{Role: "assistant", ToolCalls: res.ToolCalls},
		model.Message{Role: "tool", ToolCallID: res.ToolCalls[0].ID, Content: "ok"},
		model.Message{Role: "tool", ToolCallID: res.ToolCalls[1].ID, Content: "ok"})
	final := call(t, req)
	for _, want := range []string{"Goal: Ship the parser", "Next action: Write tests", "1 of 2 steps done"} {
		if !strings.Contains(final.Text, want) {
			t.Fatalf("answer %q lacks %q", final.Text, want)
		}
	}
	if len(final.ToolCalls) != 0 || final.FinishReason != model.FinishStop {
		t.Fatalf("final = %+v", final)
	}
}

func TestContinueWithoutTask(t *testing.T) {
	t.Parallel()
	res := call(t, model.Request{System: system(nil), Tools: tools, Messages: []model.Message{{Role: "user", Content: "continue"}}})
	if len(res.ToolCalls) != 0 || !strings.Contains(res.Text, "nothing to continue") {
		t.Fatalf("res = %+v", res)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	res := call(t, model.Request{System: contextbuild.SummarizePrompt, Messages: []model.Message{{Role: "user", Content: "user: a\nassistant: b"}}})
	if res.Text != "- user: a\n- assistant: b" {
		t.Fatalf("summary = %q", res.Text)
	}
}
