package sqlq

import (
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT * FROM t WHERE a = ? AND b = ?`, `SELECT * FROM t WHERE a = $1 AND b = $2`},
		{`VALUES (?, ?, ?)`, `VALUES ($1, $2, $3)`},
		{`WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC`, `WHERE id = $1 OR name = $1 ORDER BY id = $1 DESC`},
		// A bare ? after numbered ones takes one more than the largest, as in SQLite.
		{`?2, ?, ?1, ?`, `$2, $3, $1, $4`},
		{`?10?`, `$10$11`},
		// Quoted text, quoted identifiers and comments keep their question marks.
		{`WHERE a = '?' AND b = ?`, `WHERE a = '?' AND b = $1`},
		{`WHERE a = 'it''s ?' AND b = ?`, `WHERE a = 'it''s ?' AND b = $1`},
		{`WHERE a LIKE ? ESCAPE '\' AND b = ?`, `WHERE a LIKE $1 ESCAPE '\' AND b = $2`},
		{`SELECT "odd?name" FROM t WHERE x = ?`, `SELECT "odd?name" FROM t WHERE x = $1`},
		{`SELECT "a""?" , ?`, `SELECT "a""?" , $1`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{"SELECT ? -- to the end?", "SELECT $1 -- to the end?"},
		{`SELECT ? /* what? */ , ?`, `SELECT $1 /* what? */ , $2`},
		{`SELECT ? /* unclosed?`, `SELECT $1 /* unclosed?`},
		{`SELECT 'unclosed?`, `SELECT 'unclosed?`},
		// A lone minus or slash is an operator.
		{`SELECT ? - ?, ? / ?`, `SELECT $1 - $2, $3 / $4`},
		{`SELECT 'x', 'y?', ?`, `SELECT 'x', 'y?', $1`},
	} {
		if got := Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzRebind: Rebind changes nothing but placeholders (with both kinds of marks and the digits
// after them taken out, input and output are the same text), never adds a question mark, and is
// done after one pass (what is left is quoted or commented out, so a second pass changes nothing).
func FuzzRebind(f *testing.F) {
	for _, s := range []string{`a = ? AND b = '?'`, `?1 ?`, `"x?" -- ?` + "\n?", `/* ? */ ?`, `''''?`, `$1 ?`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := Rebind(in)
		if strings.Count(out, "?") > strings.Count(in, "?") {
			t.Fatalf("Rebind(%q) = %q adds question marks", in, out)
		}
		if again := Rebind(out); again != out {
			t.Fatalf("Rebind(%q) = %q, and again %q", in, out, again)
		}
		if strip(strip(in, '?'), '$') != strip(strip(out, '?'), '$') {
			t.Fatalf("Rebind(%q) = %q changes more than placeholders", in, out)
		}
	})
}

// strip removes from s every mark and the digits right after it.
func strip(s string, mark byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != mark {
			b.WriteByte(s[i])
			continue
		}
		for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			i++
		}
	}
	return b.String()
}

// BenchmarkRebind measures the rewrite PostgreSQL's driver makes of every statement it runs,
// on the longest shared one.
func BenchmarkRebind(b *testing.B) {
	q := `INSERT INTO runs (` + runCols + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	for b.Loop() {
		Rebind(q)
	}
}
