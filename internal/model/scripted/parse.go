package scripted

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// step is one plan step as rendered in the context.
type step struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

// workingMemory is the working memory as the planner reads it back from the context's system message.
type workingMemory struct {
	Goal       string
	NextAction string
	Plan       []step
	Notes      []string
}

var planLine = regexp.MustCompile(`^\s+(\d+)\. \[(\w+)\] (.*)$`)

// parseWorkingMemory reads the "## Working memory" section that contextbuild renders. It sees only what
// the context says: no hidden state.
func parseWorkingMemory(system string) workingMemory {
	var m workingMemory
	_, sec, ok := strings.Cut(system, contextbuild.HeadingWorkingMemory)
	if !ok {
		return m
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	inNotes := false
	for _, line := range strings.Split(sec, "\n") {
		switch {
		case strings.HasPrefix(line, "Goal: "):
			m.Goal, inNotes = strings.TrimPrefix(line, "Goal: "), false
		case strings.HasPrefix(line, "Next action: "):
			m.NextAction, inNotes = strings.TrimPrefix(line, "Next action: "), false
		case line == "Notes:":
			inNotes = true
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
			inNotes = false
		case inNotes && strings.HasPrefix(line, "  - "):
			m.Notes = append(m.Notes, strings.TrimPrefix(line, "  - "))
		default:
			if p := planLine.FindStringSubmatch(line); p != nil {
				if n, _ := strconv.Atoi(p[1]); n == len(m.Plan)+1 {
					m.Plan = append(m.Plan, step{Title: p[3], Status: p[2]})
				}
			}
		}
	}
	return m
}

// current returns the index of the step in progress (the first doing, else the first todo), or -1.
func (m workingMemory) current() int {
	for i, s := range m.Plan {
		if s.Status == "doing" {
			return i
		}
	}
	for i, s := range m.Plan {
		if s.Status == "todo" {
			return i
		}
	}
	return -1
}

var continueWords = regexp.MustCompile(`(?i)\b(continue|resume|carry on|keep going|go on|proceed|next step)\b|继续`)

// isContinue reports whether the user asks to continue the task in progress.
func isContinue(s string) bool { return continueWords.MatchString(s) }

var newTaskPrefix = regexp.MustCompile(`(?i)^\s*(new task|task|goal)\s*:\s*`)

// taskFrom turns a user's message into a goal and a plan. Steps come from the message itself
// (numbered or bulleted lines, or "then", ";" and "," separated clauses); a message with one
// clause gets a three-step plan around it.
func taskFrom(msg string) (string, []string) {
	msg = newTaskPrefix.ReplaceAllString(strings.TrimSpace(msg), "")
	goal := firstSentence(msg)
	// "Goal: step, then step" names the goal before the colon and the steps after it.
	if head, rest, ok := strings.Cut(strings.Split(msg, "\n")[0], ":"); ok && len(splitter.Split(strings.TrimSpace(rest), -1)) >= 2 {
		goal, msg = clip(strings.TrimSpace(head), 200), strings.TrimSpace(rest)
	}
	var steps []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if t := listItem.FindStringSubmatch(line); t != nil {
			steps = append(steps, clean(t[1]))
		}
	}
	if len(steps) < 2 {
		steps = nil
		for _, part := range splitter.Split(msg, -1) {
			if p := clean(part); p != "" && len(steps) < 8 {
				steps = append(steps, p)
			}
		}
	}
	if len(steps) < 2 {
		steps = []string{"Work out what \"" + clip(goal, 60) + "\" needs", "Do the work", "Check the result against the goal"}
	}
	return goal, steps
}

var (
	listItem = regexp.MustCompile(`^(?:\d+[.)]|[-*])\s+(.+)$`)
	splitter = regexp.MustCompile(`(?i)\s*(?:;|,?\s+then\s+|,?\s+and then\s+|\.\s+|，|；|然后)\s*`)
)

func firstSentence(s string) string {
	s = strings.TrimSpace(strings.Split(s, "\n")[0])
	if i := strings.IndexAny(s, ".!?。"); i > 0 && i < len(s)-1 {
		s = s[:i]
	}
	return clip(strings.TrimRight(s, ".!?。 "), 200)
}

func clean(s string) string {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ".!?。"))
	s = regexp.MustCompile(`(?i)^(please|first|finally|and)\s+`).ReplaceAllString(s, "")
	if s == "" {
		return ""
	}
	r := []rune(s)
	return string(unicode.ToUpper(r[0])) + string(r[1:])
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
