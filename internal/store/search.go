package store

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Session search: what a driver indexes of a message and how a search text becomes terms.

// SearchDocumentChars is how much of a message's text is indexed for session search: its first
// 65,536 characters (the migration's backfill cuts the same way).
const SearchDocumentChars = 65536

// MaxSessionSearchTerms is how many words a session search may hold.
const MaxSessionSearchTerms = 8

// MetadataKeyChars are the characters a metadata filter's key may hold.
const MetadataKeyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:"

// SearchDocument is the text a driver indexes for a message of content: its first
// SearchDocumentChars characters.
func SearchDocument(content string) string {
	if utf8.RuneCountInString(content) <= SearchDocumentChars {
		return content
	}
	n := 0
	for i := range content {
		if n == SearchDocumentChars {
			return content[:i]
		}
		n++
	}
	return content
}

// SearchQueryTerms splits a session search text into its words, lower-cased: runs of letters and
// digits, each once, in order, every word kept (a session search has no stop words: it requires
// all of them). The second result is false when the text holds more than MaxSessionSearchTerms
// words.
func SearchQueryTerms(text string) ([]string, bool) {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out, len(out) <= MaxSessionSearchTerms
}
