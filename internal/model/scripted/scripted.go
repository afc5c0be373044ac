// Package scripted is carryon's offline model: a deterministic planner that needs no key and no
// network, so that the demo and the tests run anywhere. It reads only the context it is given
// (the working memory rendered in the system message, the conversation, the offered tools) and
// never keeps hidden state: two identical requests get identical answers.
//
// On a new task it sets the goal, a plan and the next action with update_working_memory and
// writes PLAN.md to the workspace; asked to continue, it does the step in progress (writing
// work/step-N.md), marks it done and moves the next action on; then it answers in terms of the
// goal and the next action. Asked to summarise (contextbuild.SummarizePrompt), it lists the turns.
// A stated preference is remembered (tool remember), a question about one recalled (recall), and
// an answer starts with "Noted preference: …" when the context shows long-term memory (prefs.go).
package scripted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/carryon-hub/carryon/internal/contextbuild"
	"github.com/carryon-hub/carryon/internal/model"
)

// Provider is the scripted model.
type Provider struct {
	// Delay is slept before each answer (CARRYON_SCRIPTED_DELAY), to make long runs visible.
	Delay time.Duration
}

// New returns the scripted model with a delay per model step.
func New(delay time.Duration) *Provider { return &Provider{Delay: delay} }

// Name returns "scripted".
func (p *Provider) Name() string { return "scripted" }

// Stream answers one request: text deltas word by word, then tool calls or the end of the turn.
func (p *Provider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		if ctx.Err() != nil { // as a backend refuses a cancelled request, whatever the answer
			yield(model.Chunk{}, ctx.Err())
			return
		}
		if p.Delay > 0 {
			select {
			case <-ctx.Done():
				yield(model.Chunk{}, ctx.Err())
				return
			case <-time.After(p.Delay):
			}
		}
		text, calls := plan(req)
		words := strings.SplitAfter(text, " ")
		for _, w := range words {
			if w == "" {
				continue
			}
			if ctx.Err() != nil {
				yield(model.Chunk{}, ctx.Err())
				return
			}
			if !yield(model.Chunk{Delta: w}, nil) {
				return
			}
		}
		last := model.Chunk{ToolCalls: calls, FinishReason: model.FinishStop, Usage: &model.Usage{InputTokens: inputTokens(req), OutputTokens: (len(text) + 3) / 4}}
		if len(calls) > 0 {
			last.FinishReason = model.FinishToolCalls
		}
		yield(last, nil)
	}
}

// plan decides the answer: a summary, tool calls for the turn, or the turn's final text.
func plan(req model.Request) (string, []model.ToolCall) {
	if strings.HasPrefix(req.System, contextbuild.SummarizePrompt) {
		return summarize(req), nil
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == model.RoleUser {
			last = i
		}
	}
	if last < 0 {
		return "There is no request to answer.", nil
	}
	user, directives := splitDirectives(req.Messages[last].Content)
	after := req.Messages[last+1:]
	mem := parseWorkingMemory(req.System)
	if len(after) == 0 {
		calls := act(mem, user, req)
		for _, d := range directives {
			d.ID = callID(user, d.Name, len(calls), len(req.Messages))
			calls = append(calls, d)
		}
		if len(calls) > 0 {
			return "", calls
		}
	}
	return notedPreference(parseLongTerm(req.System)) + answer(mem, user, after), nil
}

// act returns the tool calls that carry the turn out, if any are available and needed.
func act(mem workingMemory, user string, req model.Request) []model.ToolCall {
	if strings.TrimSpace(user) == "" {
		return nil
	}
	has := map[string]bool{}
	for _, t := range req.Tools {
		has[t.Name] = true
	}
	var calls []model.ToolCall
	add := func(name string, args any) {
		if has[name] {
			b, _ := json.Marshal(args)
			calls = append(calls, model.ToolCall{ID: callID(user, name, len(calls), len(req.Messages)), Name: name, Arguments: b})
		}
	}
	pref := preference(user)
	if pref != "" {
		add("remember", map[string]string{"namespace": "prefs", "key": prefKey(pref), "value": pref, "text": pref})
	}
	if asksRecall(user) {
		add("recall", map[string]any{"query": user, "namespace": "prefs"})
	}
	onlyWorkingMemory := len(calls) > 0 && !newTaskPrefix.MatchString(user)
	switch {
	case onlyWorkingMemory && mem.Goal == "":
		// A preference or a question about one is not a task.
	case isContinue(user) && mem.Goal != "":
		i := mem.current()
		if i < 0 {
			return nil
		}
		plan := append([]step(nil), mem.Plan...)
		plan[i].Status = "done"
		next := "Nothing: every step of the plan is done"
		if i+1 < len(plan) {
			plan[i+1].Status = "doing"
			next = plan[i+1].Title
		}
		add("write_file", map[string]string{"path": fmt.Sprintf("work/step-%d.md", i+1),
			"content": fmt.Sprintf("# Step %d: %s\n\nGoal: %s\n\nThis step is done.\n", i+1, plan[i].Title, mem.Goal)})
		add("update_working_memory", map[string]any{"patch": map[string]any{"plan": plan, "next_action": next,
			"notes": append(mem.Notes, fmt.Sprintf("Step %d done: %s", i+1, plan[i].Title))}})
	case mem.Goal == "" && !isContinue(user), newTaskPrefix.MatchString(user):
		goal, steps := taskFrom(user)
		plan := make([]step, len(steps))
		var md strings.Builder
		fmt.Fprintf(&md, "# %s\n\n", goal)
		for i, s := range steps {
			plan[i] = step{Title: s, Status: "todo"}
			fmt.Fprintf(&md, "%d. %s\n", i+1, s)
		}
		plan[0].Status = "doing"
		add("update_working_memory", map[string]any{"patch": map[string]any{"goal": goal, "plan": plan,
			"next_action": steps[0], "notes": []string{"Task received: " + clip(user, 160)}}})
		add("write_file", map[string]string{"path": "PLAN.md", "content": md.String()})
	case mem.Goal != "" && !isContinue(user):
		add("update_working_memory", map[string]any{"patch": map[string]any{"notes": append(mem.Notes, "User said: "+clip(user, 160))}})
	}
	return calls
}

// answer writes the turn's final text from the working memory as the context now shows it.
func answer(mem workingMemory, user string, after []model.Message) string {
	if mem.Goal == "" {
		if isContinue(user) {
			return "There is no task in this session's working memory yet, so there is nothing to continue. Tell me the task first."
		}
		return "Noted. Tell me the task and I will set a goal and a plan."
	}
	var did []string
	for _, m := range after {
		for _, c := range m.ToolCalls {
			var a struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(c.Arguments, &a)
			switch c.Name {
			case "write_file":
				did = append(did, "wrote "+a.Path)
			case "update_working_memory":
				did = append(did, "updated the working memory")
			}
		}
	}
	var b strings.Builder
	switch {
	case isContinue(user):
		b.WriteString("Continuing the task. ")
	case len(mem.Plan) > 0 && mem.current() == 0 && mem.Plan[0].Status == "doing" && len(did) > 0 && strings.Contains(strings.Join(did, " "), "PLAN.md"):
		b.WriteString("New task. ")
	}
	fmt.Fprintf(&b, "Goal: %s. ", strings.TrimRight(mem.Goal, "."))
	if len(did) > 0 {
		fmt.Fprintf(&b, "I %s. ", strings.Join(did, " and "))
	}
	done := 0
	for _, s := range mem.Plan {
		if s.Status == "done" {
			done++
		}
	}
	if len(mem.Plan) > 0 {
		fmt.Fprintf(&b, "Progress: %d of %d steps done. ", done, len(mem.Plan))
	}
	fmt.Fprintf(&b, "Next action: %s.", strings.TrimRight(mem.NextAction, "."))
	return b.String()
}

// splitDirectives takes the lines "/tool NAME {json arguments}" out of a user's message: the
// scripted model calls those tools as asked, after its own calls (a way to drive any tool, in
// tests and demos). The rest of the message is planned as usual.
func splitDirectives(msg string) (string, []model.ToolCall) {
	var keep []string
	var calls []model.ToolCall
	for _, line := range strings.Split(msg, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/tool ")
		if !ok {
			keep = append(keep, line)
			continue
		}
		name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if args = strings.TrimSpace(args); args == "" || !json.Valid([]byte(args)) {
			args = "{}"
		}
		calls = append(calls, model.ToolCall{Name: name, Arguments: json.RawMessage(args)})
	}
	return strings.TrimSpace(strings.Join(keep, "\n")), calls
}

// summarize lists the turns of the transcript it was given, one line each.
func summarize(req model.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		for _, line := range strings.Split(m.Content, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(&b, "- %s\n", clip(line, 160))
			}
		}
	}
	return strings.TrimSpace(b.String())
}

func callID(user, name string, i, turn int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%d", user, name, i, turn)))
	return "call_" + hex.EncodeToString(h[:6])
}

func inputTokens(req model.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return (n + 3) / 4
}
