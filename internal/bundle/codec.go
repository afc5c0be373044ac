package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/jsongate"
)

// Encoder builds a bundle in memory: the header, then the lines added, then (Finish) the end
// line. It refuses to grow past MaxBytes.
type Encoder struct {
	buf    bytes.Buffer
	counts map[string]int64
	err    error
}

// NewEncoder starts the bundle of session id, exported at.
func NewEncoder(id string, at time.Time) *Encoder {
	e := &Encoder{counts: map[string]int64{}}
	e.write(Header{Format: Format, Version: Version, ExportedAt: at.UTC(), SessionID: id})
	return e
}

// Add writes one line.
func (e *Encoder) Add(l Line) {
	e.counts[l.Kind]++
	e.write(l)
}

func (e *Encoder) write(v any) {
	if e.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.err = carryon.Errorf(carryon.EINTERNAL, "export: %v", err)
		return
	}
	if e.buf.Len()+len(b)+1 > MaxBytes-256 { // room for the end line
		e.err = carryon.Errorf(carryon.ETOOLARGE, "the session's bundle is over the %d bytes a bundle may hold", MaxBytes)
		return
	}
	e.buf.Write(b)
	e.buf.WriteByte('\n')
}

// Finish writes the end line and returns the bundle.
func (e *Encoder) Finish() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	sum := sha256.Sum256(e.buf.Bytes())
	counts := map[string]int64{}
	for k, n := range e.counts {
		counts[k] = n
	}
	b, _ := json.Marshal(Line{Kind: KindEnd, SHA256: hex.EncodeToString(sum[:]), Counts: counts})
	e.buf.Write(b)
	e.buf.WriteByte('\n')
	return e.buf.Bytes(), nil
}

// Bundle is a decoded bundle: its header, its lines in order (the end line left out) and its
// checksum.
type Bundle struct {
	Header Header
	Lines  []Line
	// Raw holds each line's bytes as they came (without the newline), Lines[i]'s at Raw[i].
	Raw    [][]byte
	SHA256 string
}

// Decode reads and checks a bundle: EINVALID when it is not one (not JSON Lines, no header, a
// line of an unknown kind or with unknown fields, no end line or anything after it, a checksum
// or counts that do not match, a version newer than Version), ETOOLARGE over MaxBytes.
func Decode(data []byte) (*Bundle, error) {
	if len(data) > MaxBytes {
		return nil, carryon.Errorf(carryon.ETOOLARGE, "the bundle is %d bytes; a bundle may hold %d", len(data), MaxBytes)
	}
	if len(data) == 0 {
		return nil, invalid("the bundle is empty")
	}
	if data[len(data)-1] != '\n' {
		return nil, invalid("the bundle is truncated: its last line does not end with a newline (the end line is missing)")
	}
	lines := bytes.Split(data[:len(data)-1], []byte("\n"))
	var b Bundle
	if err := decodeHeader(lines[0], &b.Header); err != nil {
		return nil, err
	}
	if len(lines) < 2 {
		return nil, invalid("the bundle is truncated: it has a header and no end line")
	}
	endAt := len(lines) - 1
	var end Line
	if err := decodeLine(lines[endAt], endAt+1, &end); err != nil || end.Kind != KindEnd {
		return nil, invalid("the bundle is truncated: its last line is not the end line with the checksum")
	}
	sum := sha256.Sum256(data[:len(data)-len(lines[endAt])-1])
	if got := hex.EncodeToString(sum[:]); got != end.SHA256 {
		return nil, invalid("the bundle's checksum does not match: its lines hash to sha256 %s, its end line says %s (the bundle was changed or cut)", got, end.SHA256)
	}
	counts := map[string]int64{}
	for i, raw := range lines[1:endAt] {
		var l Line
		if err := decodeLine(raw, i+2, &l); err != nil {
			return nil, err
		}
		if l.Kind == KindEnd {
			return nil, invalid("line %d: an end line before the last line", i+2)
		}
		counts[l.Kind]++
		b.Lines = append(b.Lines, l)
		b.Raw = append(b.Raw, raw)
	}
	for _, k := range slices.Sorted(keys(counts, end.Counts)) {
		if counts[k] != end.Counts[k] {
			return nil, invalid("the end line counts %d %s lines; the bundle has %d", end.Counts[k], k, counts[k])
		}
	}
	b.SHA256 = end.SHA256
	return &b, nil
}

func keys(maps ...map[string]int64) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range maps {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

func decodeHeader(raw []byte, h *Header) error {
	var probe struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Format != Format {
		return invalid("line 1 is not a bundle header: a bundle starts with {\"format\":%q,\"version\":%d,…}", Format, Version)
	}
	if probe.Version > Version {
		return invalid("the bundle is of format version %d; this server reads versions up to %d", probe.Version, Version)
	}
	if probe.Version < 1 {
		return invalid("the bundle's format version must be 1 or more, not %d", probe.Version)
	}
	if err := jsongate.Decode(raw, h); err != nil {
		return invalid("line 1 (the header): %v", err)
	}
	return nil
}

// decodeLine decodes line n (from 1) strictly and checks that its kind is known and that it
// holds that kind's field and no other.
func decodeLine(raw []byte, n int, l *Line) error {
	if err := jsongate.Decode(raw, l); err != nil {
		return invalid("line %d: %v", n, err)
	}
	set := map[string]bool{
		KindSession: l.Session != nil, KindFork: l.Fork != nil, KindMessage: l.Message != nil,
		KindTombstone: l.Tombstone != nil, KindRevision: l.Revision != nil, KindRun: l.Run != nil,
		KindAction: l.Action != nil, KindEvent: l.Event != nil, KindFile: l.File != nil,
		KindEnd: l.SHA256 != "" || l.Counts != nil,
	}
	if _, ok := set[l.Kind]; !ok {
		return invalid("line %d: unknown line kind %q (this server knows %v and %s)", n, l.Kind, Kinds, KindEnd)
	}
	for k, has := range set {
		if has != (k == l.Kind) {
			return invalid("line %d: a %s line must hold its %s and nothing of another kind", n, l.Kind, fieldOf(l.Kind))
		}
	}
	return nil
}

func fieldOf(kind string) string {
	switch kind {
	case KindRevision:
		return "revision"
	case KindEnd:
		return "sha256 and counts"
	}
	return kind
}

func invalid(format string, args ...any) error {
	return carryon.Errorf(carryon.EINVALID, "%s", fmt.Sprintf(format, args...))
}
