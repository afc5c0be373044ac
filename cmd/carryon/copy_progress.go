package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// copyProgress draws how far the copy of the current table is on stderr: a bar redrawn in place
// on a terminal, a line every few seconds and one per table otherwise, or nothing.
type copyProgress struct {
	w     io.Writer
	mode  string // "bar", "lines" or "none"
	table string
	total int64
	done  int64
	last  time.Time
	every time.Duration
}

// newCopyProgress resolves mode "auto" to "bar" when w is a terminal and to "lines" otherwise.
func newCopyProgress(w io.Writer, mode string) (*copyProgress, error) {
	switch mode {
	case "auto":
		mode = "lines"
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				mode = "bar"
			}
		}
	case "bar", "lines", "none":
	default:
		return nil, usagef("--progress must be auto, bar, lines or none, not %q", mode)
	}
	p := &copyProgress{w: w, mode: mode, every: 100 * time.Millisecond}
	if mode == "lines" {
		p.every = 5 * time.Second
	}
	return p, nil
}

// start begins a table of total rows.
func (p *copyProgress) start(table string, total int64) {
	p.table, p.total, p.done, p.last = table, total, 0, time.Now()
	if p.mode == "bar" {
		p.draw()
	}
}

// addN counts n more rows and redraws when the last drawing is old enough.
func (p *copyProgress) addN(n int64) {
	p.done += n
	if p.mode != "none" && time.Since(p.last) >= p.every {
		p.last = time.Now()
		p.draw()
	}
}

// finish draws the table's final state and ends its line.
func (p *copyProgress) finish() {
	if p.mode == "none" {
		return
	}
	p.draw()
	if p.mode == "bar" {
		fmt.Fprintln(p.w)
	}
}

func (p *copyProgress) draw() {
	const width = 30
	counts := commas(p.done) + "/" + commas(p.total)
	switch p.mode {
	case "bar":
		filled := width
		if p.total > 0 {
			filled = int(min(p.done, p.total) * width / p.total)
		}
		fmt.Fprintf(p.w, "\r%-18s [%s%s] %s", p.table, strings.Repeat("#", filled), strings.Repeat("-", width-filled), counts)
	case "lines":
		fmt.Fprintf(p.w, "%-18s %s rows\n", p.table, counts)
	}
}

// commas formats n with a comma between each group of three digits: 4,200.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
