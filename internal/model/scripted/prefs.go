package scripted

import (
	"regexp"
	"strings"

	"github.com/carryon-hub/carryon/internal/contextbuild"
)

// Long-term memory in the scripted model: a user's message that states a preference ("I prefer
// …", "remember that …", "always …") is remembered with the remember tool under namespace prefs,
// with a key made of the sentence's words; a question about what was remembered ("what do I
// prefer", "do you remember …") is looked up with recall. The items the context's long-term
// memory part holds are read back from its lines, never from anywhere else.

var (
	prefWords   = regexp.MustCompile(`(?i)\b(i prefer|i'd prefer|i would prefer|remember that|always)\b`)
	recallWords = regexp.MustCompile(`(?i)\b(what do i prefer|my preferences?|do you remember|what did i (say|tell you))\b`)
	sentence    = regexp.MustCompile(`[^.!?。\n]+[.!?。]*`)
	ltLine      = regexp.MustCompile(`^- [^/\s]+/[^:\s]+: (.*?)(?: \((?:score [0-9.]+|recent)\))?$`)
	keyWord     = regexp.MustCompile(`[a-z0-9]+`)
)

// keySkip are words left out of a preference's key.
var keySkip = map[string]bool{"i": true, "prefer": true, "d": true, "would": true, "remember": true, "that": true,
	"always": true, "the": true, "a": true, "an": true, "to": true, "my": true, "me": true, "use": true, "with": true,
	"in": true, "of": true, "for": true, "and": true, "please": true, "you": true, "be": true, "is": true, "it": true}

// preference returns the first sentence of msg that states a preference, without its final
// punctuation, or "". A question ("which editor do I prefer?") states none.
func preference(msg string) string {
	for _, s := range sentence.FindAllString(msg, -1) {
		if s = strings.TrimSpace(s); prefWords.MatchString(s) && !recallWords.MatchString(s) && !strings.Contains(s, "?") {
			return clip(strings.TrimRight(s, ".!。 "), 300)
		}
	}
	return ""
}

// prefKey derives a key from a preference's words: up to four words that carry its meaning,
// joined with "-" ("I prefer dark mode in the editor" is dark-mode-editor).
func prefKey(sentence string) string {
	var words []string
	for _, w := range keyWord.FindAllString(strings.ToLower(sentence), -1) {
		if !keySkip[w] && len(words) < 4 {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return "preference"
	}
	return clip(strings.Join(words, "-"), 120)
}

// asksRecall reports whether the user asks what was remembered.
func asksRecall(msg string) bool { return recallWords.MatchString(msg) }

// parseLongTerm returns the texts of the items in the context's long-term memory part, most
// relevant first.
func parseLongTerm(system string) []string {
	_, sec, ok := strings.Cut(system, contextbuild.HeadingLongTerm)
	if !ok {
		return nil
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var out []string
	for _, line := range strings.Split(sec, "\n") {
		if m := ltLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// notedPreference is the sentence an answer starts with when long-term memory holds items.
func notedPreference(lt []string) string {
	if len(lt) == 0 {
		return ""
	}
	return "Noted preference: " + strings.TrimRight(strings.Trim(lt[0], `"`), ".") + ". "
}
