package mcptool

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// frameScan reads one JSON-RPC message in pieces, in constant memory whatever its size, and keeps
// what a replacement for it needs: whether it is an object, its id, whether it has a method,
// a result or an error, the result's isError and the start of the text of its content blocks
// ("text" of the elements of result.content), whatever the order of the members. It does not
// check that the message is valid JSON: it only has to find its way in one that is.
type frameScan struct {
	stack    []scanLevel // the objects and arrays the scan is in
	inString bool
	escaped  bool // the last byte in the string was a backslash
	scalar   bool // inside a number, true, false or null
	target   scanTarget

	notObject            bool
	idSet, idLong        bool
	id                   []byte
	hasMethod, hasResult bool
	isErrorRaw           []byte
	blocks               []scanBlock
	budget               int // text bytes left to keep
}

// scanLevel is one object or array the scan is in.
type scanLevel struct {
	object  bool
	wantKey bool   // an object's next string is a key
	key     []byte // an object's current member, up to maxScanKey bytes
	longKey bool
}

type scanBlock struct {
	typ  []byte
	text []byte // raw: still JSON-escaped
}

// scanTarget says where the bytes of the string or scalar being read go.
type scanTarget int

const (
	toNothing scanTarget = iota
	toKey
	toID
	toIsError
	toType
	toText
)

// Bounds of what is kept besides the text.
const (
	maxScanKey = 16
	maxScanID  = 256
)

func newFrameScan(budget int) *frameScan { return &frameScan{budget: budget} }

// feed reads the next piece of the message.
func (sc *frameScan) feed(b []byte) {
	for i := 0; i < len(b); {
		if sc.inString {
			if sc.escaped {
				sc.keep(b[i : i+1])
				sc.escaped = false
				i++
				continue
			}
			j := stringEnd(b[i:])
			if j < 0 {
				sc.keep(b[i:])
				return
			}
			sc.keep(b[i : i+j])
			i += j
			if b[i] == '\\' {
				sc.keep(b[i : i+1])
				sc.escaped = true
			} else {
				if sc.target == toID { // an id that is a string keeps its quotes
					sc.keep(b[i : i+1])
				}
				sc.inString = false
				sc.target = toNothing
			}
			i++
			continue
		}
		c := b[i]
		switch c {
		case ' ', '\t', '\r', '\n', ':':
			sc.endScalar()
		case '{', '[':
			sc.endScalar()
			sc.begin(c)
			sc.target = toNothing
			sc.stack = append(sc.stack, scanLevel{object: c == '{', wantKey: c == '{'})
		case '}', ']':
			sc.endScalar()
			if len(sc.stack) > 0 {
				sc.stack = sc.stack[:len(sc.stack)-1]
			}
		case ',':
			sc.endScalar()
			if top := sc.top(); top != nil && top.object {
				top.wantKey, top.key, top.longKey = true, top.key[:0], false
			}
		case '"':
			sc.endScalar()
			if top := sc.top(); top != nil && top.object && top.wantKey {
				top.wantKey = false
				sc.target = toKey
			} else {
				sc.begin(c)
				if sc.target == toID {
					sc.keep(b[i : i+1])
				}
			}
			sc.inString = true
		default:
			if !sc.scalar {
				sc.begin(c)
				sc.scalar = true
			}
			sc.keep(b[i : i+1])
		}
		i++
	}
}

func (sc *frameScan) top() *scanLevel {
	if len(sc.stack) == 0 {
		return nil
	}
	return &sc.stack[len(sc.stack)-1]
}

func (sc *frameScan) endScalar() {
	if sc.scalar {
		sc.scalar = false
		sc.target = toNothing
	}
}

// at reports whether level i of the stack is an object now in its member key.
func (sc *frameScan) at(i int, key string) bool {
	l := sc.stack[i]
	return l.object && !l.longKey && string(l.key) == key
}

// begin notes a value that starts with c where the scan is, and sets where its bytes go.
func (sc *frameScan) begin(c byte) {
	sc.target = toNothing
	switch d := len(sc.stack); {
	case d == 0:
		sc.notObject = sc.notObject || c != '{'
	case d == 1 && sc.at(0, "id"):
		sc.idSet, sc.id, sc.target = true, sc.id[:0], toID
	case d == 1 && sc.at(0, "method"):
		sc.hasMethod = true
	case d == 1 && sc.at(0, "result"):
		sc.hasResult = c == '{'
	case d == 2 && sc.at(0, "result") && sc.at(1, "isError"):
		sc.isErrorRaw, sc.target = sc.isErrorRaw[:0], toIsError
	case d == 3 && sc.at(0, "result") && sc.at(1, "content") && !sc.stack[2].object:
		if c == '{' {
			sc.blocks = append(sc.blocks, scanBlock{})
		}
	case d == 4 && sc.at(0, "result") && sc.at(1, "content") && !sc.stack[2].object && len(sc.blocks) > 0 && c == '"':
		switch {
		case sc.at(3, "text"):
			sc.target = toText
		case sc.at(3, "type"):
			sc.target = toType
		}
	}
}

// keep puts b, bytes of the string or scalar being read, where they go.
func (sc *frameScan) keep(b []byte) {
	switch sc.target {
	case toKey:
		top := sc.top()
		if len(top.key)+len(b) > maxScanKey {
			top.longKey = true
			return
		}
		top.key = append(top.key, b...)
	case toID:
		if len(sc.id)+len(b) > maxScanID {
			sc.idLong = true
			return
		}
		sc.id = append(sc.id, b...)
	case toIsError:
		if len(sc.isErrorRaw) < 8 {
			sc.isErrorRaw = append(sc.isErrorRaw, b...)
		}
	case toType:
		last := &sc.blocks[len(sc.blocks)-1]
		if len(last.typ) < 32 {
			last.typ = append(last.typ, b...)
		}
	case toText:
		last := &sc.blocks[len(sc.blocks)-1]
		n := min(len(b), sc.budget)
		last.text = append(last.text, b[:n]...)
		sc.budget -= n
	}
}

func (sc *frameScan) isError() bool { return string(sc.isErrorRaw) == "true" }

// text is the kept text of the text blocks, joined with newlines as render joins them, and the
// number of blocks of other types.
func (sc *frameScan) text() (text string, others int) {
	var parts []string
	for _, b := range sc.blocks {
		if t := string(b.typ); t != "" && t != "text" {
			others++
			continue
		}
		if s, ok := unescapePrefix(b.text); ok && s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n"), others
}

// unescapePrefix decodes raw, the start of a JSON string's contents (without its quotes), which
// may end in the middle of an escape or of a UTF-8 sequence: what cannot be decoded at its end
// is dropped.
func unescapePrefix(raw []byte) (string, bool) {
	// A cut escape is at most 11 bytes of a surrogate pair (\ud83d\ude0).
	for drop := 0; drop <= 12 && drop <= len(raw); drop++ {
		cut := wholeRunes(raw[:len(raw)-drop])
		if endsInHighSurrogate(cut) {
			continue // its other half was cut off
		}
		quoted := make([]byte, 0, len(cut)+2)
		quoted = append(append(append(quoted, '"'), cut...), '"')
		var s string
		if json.Unmarshal(quoted, &s) == nil {
			return s, true
		}
	}
	return "", false
}

// wholeRunes is b without a UTF-8 sequence cut at its end.
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// endsInHighSurrogate reports whether b ends in the escape of the first half of a surrogate pair
// (\ud800 to \udbff).
func endsInHighSurrogate(b []byte) bool {
	n := len(b)
	if n < 6 || b[n-6] != '\\' || b[n-5] != 'u' || (b[n-4] != 'd' && b[n-4] != 'D') ||
		!strings.ContainsRune("89abAB", rune(b[n-3])) {
		return false
	}
	slashes := 0 // the backslash starts an escape when an even number of them comes before it
	for i := n - 7; i >= 0 && b[i] == '\\'; i-- {
		slashes++
	}
	return slashes%2 == 0
}

// stringEnd returns the index of the first backslash or quote in b, -1 if there is none. In a
// JSON string every quote but the last follows a backslash, so looking for the quote only up to
// the first backslash keeps the scan linear.
func stringEnd(b []byte) int {
	j := bytes.IndexByte(b, '\\')
	if j < 0 {
		return bytes.IndexByte(b, '"')
	}
	if q := bytes.IndexByte(b[:j], '"'); q >= 0 {
		return q
	}
	return j
}
