package contextbuild

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/carryon-hub/carryon"
)

// Headings of the sections of the system message. The scripted model reads the working memory
// back from these lines, so they are part of the format.
const (
	HeadingWorkingMemory = "## Working memory"
	HeadingLongTerm      = "## Long-term memory"
	HeadingTools         = "## Recent tool calls"
	HeadingSummary       = "## Summary of earlier conversation"
)

// RenderWorkingMemory writes the working memory as stable, readable lines:
//
//	Goal: …
//	Plan:
//	  1. [done] …
//	Next action: …
//	Notes:
//	  - …
//	Open questions:
//	  - …
//	Other: {json of the remaining keys}
func RenderWorkingMemory(wm carryon.WorkingMemory) string {
	if len(wm) == 0 {
		return "(empty: no goal set yet)"
	}
	var b strings.Builder
	if g, ok := wm["goal"]; ok {
		fmt.Fprintf(&b, "Goal: %s\n", text(g))
	}
	if plan, ok := wm["plan"].([]any); ok {
		b.WriteString("Plan:\n")
		for i, step := range plan {
			title, status := text(step), "todo"
			if m, ok := step.(map[string]any); ok {
				title = text(m["title"])
				if s, ok := m["status"].(string); ok && s != "" {
					status = s
				}
			}
			fmt.Fprintf(&b, "  %d. [%s] %s\n", i+1, status, title)
		}
	}
	if a, ok := wm["next_action"]; ok {
		fmt.Fprintf(&b, "Next action: %s\n", text(a))
	}
	for _, k := range []struct{ key, label string }{{"notes", "Notes"}, {"open_questions", "Open questions"}} {
		switch v := wm[k.key].(type) {
		case nil:
		case []any:
			fmt.Fprintf(&b, "%s:\n", k.label)
			for _, n := range v {
				fmt.Fprintf(&b, "  - %s\n", text(n))
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", k.label, text(v))
		}
	}
	rest := map[string]any{}
	for k, v := range wm {
		switch k {
		case "goal", "next_action", "notes", "open_questions":
		case "plan":
			if _, ok := v.([]any); !ok {
				rest[k] = v
			}
		default:
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		j, _ := json.Marshal(rest)
		fmt.Fprintf(&b, "Other: %s\n", j)
	}
	return strings.TrimRight(b.String(), "\n")
}

// RenderToolDigest writes one line per action, oldest first: tool, status and a short result.
func RenderToolDigest(actions []*carryon.Action) string {
	actions = slices.Clone(actions)
	sort.SliceStable(actions, func(i, j int) bool {
		a, b := actions[i], actions[j]
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Index < b.Index
	})
	var b strings.Builder
	for _, a := range actions {
		res := a.Result
		if a.Error != "" {
			res = "error: " + a.Error
		}
		fmt.Fprintf(&b, "- %s(%s) %s: %s\n", a.Tool, clip(string(a.Args), 80), a.Status, clip(res, 120))
	}
	return strings.TrimRight(b.String(), "\n")
}

func text(v any) string {
	switch t := v.(type) {
	case string:
		return oneLine(t)
	case nil:
		return ""
	default:
		j, _ := json.Marshal(t)
		return string(j)
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func itoa(n int64) string { return fmt.Sprint(n) }
