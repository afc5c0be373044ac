package sqlq

import (
	"strconv"
	"strings"
)

// Rebind rewrites the placeholders of a statement written for SQLite into PostgreSQL's: each ?
// becomes $n and each ?NNN becomes $NNN, numbered exactly as SQLite numbers them (a bare ? takes
// one more than the largest number given so far), so the statement binds the same arguments on
// both databases. It leaves alone whatever is not a placeholder: text in single quotes (where a
// doubled quote stands for one), identifiers in double quotes, -- line comments and /* block
// comments */. Shared statements do not use PostgreSQL's ? operators (jsonb) or dollar-quoted
// strings, which SQLite does not have.
func Rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	highest := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			end := closing(query, i+1, c)
			b.WriteString(query[i:end])
			i = end
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i
			} else {
				end += 4
			}
			b.WriteString(query[i : i+end])
			i += end
		case c == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j == i+1 {
				highest++
				b.WriteString(strconv.Itoa(highest))
			} else {
				// ?NNN keeps its digits; a number too large to bind is the database's to refuse.
				b.WriteString(query[i+1 : j])
				if n, err := strconv.Atoi(query[i+1 : j]); err == nil {
					highest = max(highest, n)
				}
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// closing returns the index just past the quote q that closes the quoted text starting at i
// (a doubled quote inside stands for one), or len(s) when the text never closes.
func closing(s string, i int, q byte) int {
	for i < len(s) {
		if s[i] != q {
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			i += 2
			continue
		}
		return i + 1
	}
	return len(s)
}
