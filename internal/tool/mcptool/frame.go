package mcptool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
)

// frameReader reads a stdio server's stdout, one newline-delimited message at a time, and hands
// on every message of at most limit bytes as it is. A longer one is never held whole: it is read
// through a frameScan, in constant memory, and replaced by a short message of the same meaning
// where one can be made: an answer to a call becomes a result that holds the start of its text
// and a note of how large the answer was (or, for an error answer, an error that says so); a
// request or notification, or a message that is not a JSON object with an id, is left out with
// a warning. So one oversize answer fails no other call and does not break the connection.
type frameReader struct {
	src   *bufio.Reader
	limit int
	log   *slog.Logger
	line  []byte // the message being read, kept for the next one when it is small
	out   []byte // what is left to hand on of the current message
	err   error  // the source's error, returned once out is empty
	// prefix, when set, is what comes before a message on its line ("data: " in an event
	// stream): an oversize line that starts with it is scanned after it, and its replacement is
	// handed on after it.
	prefix []byte
}

// bigLine is the size past which the line buffer is not kept for the next message.
const bigLine = 1 << 20

func newFrameReader(r io.Reader, limit int, log *slog.Logger) *frameReader {
	return &frameReader{src: bufio.NewReaderSize(r, 64<<10), limit: limit, log: log}
}

// Read hands on the messages, each at most limit bytes.
func (r *frameReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// next reads the next message into out (nothing when it is left out) and the source's error,
// if any, into err.
func (r *frameReader) next() {
	if cap(r.line) > bigLine {
		r.line = nil
	}
	r.line = r.line[:0]
	for {
		chunk, err := r.src.ReadSlice('\n')
		if len(r.line)+len(chunk) > r.limit {
			r.out = r.oversize(chunk, err)
			return
		}
		r.line = append(r.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		r.err = err
		r.out = r.line
		return
	}
}

// oversize reads the rest of a message that went past limit with chunk (err is ReadSlice's) and
// returns its replacement, or nothing.
func (r *frameReader) oversize(chunk []byte, err error) []byte {
	sc := newFrameScan(replacementTextBytes)
	head, prefixed := r.line, false
	if len(r.prefix) > 0 {
		if len(head) == 0 {
			head, chunk = chunk, nil
		}
		if prefixed = bytes.HasPrefix(head, r.prefix); prefixed {
			head = head[len(r.prefix):]
		}
	}
	sc.feed(head)
	sc.feed(chunk)
	size := int64(len(head) + len(chunk))
	r.line = nil // the large buffer is not kept
	for err == bufio.ErrBufferFull {
		chunk, err = r.src.ReadSlice('\n')
		sc.feed(chunk)
		size += int64(len(chunk))
	}
	r.err = err
	msg := sc.replacement(size, r.limit)
	if msg == nil {
		r.log.Warn("mcp server sent a message larger than carryon reads; it is left out",
			"bytes", size, "limit", r.limit)
		return nil
	}
	r.log.Warn("mcp server answered with a message larger than carryon reads; the result is clipped",
		"bytes", size, "limit", r.limit)
	if prefixed {
		msg = append(append([]byte{}, r.prefix...), msg...)
	}
	return append(msg, '\n')
}

// replacementTextBytes is how much of an oversize answer's text its replacement keeps: what fits
// in MaxResultBytes with the note.
const replacementTextBytes = MaxResultBytes - 512

// replacement is the message that stands for the oversize message sc has read, size bytes
// against a limit of limit, or nil when none can stand for it.
func (sc *frameScan) replacement(size int64, limit int) []byte {
	if sc.notObject || sc.hasMethod || !sc.idSet || sc.idLong || !json.Valid(sc.id) {
		return nil
	}
	what := fmt.Sprintf("the MCP server's answer was %d bytes, more than the %d bytes carryon reads in one message", size, limit)
	type errorObject struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type result struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError,omitempty"`
	}
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  *result         `json:"result,omitempty"`
		Error   *errorObject    `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: sc.id}
	if !sc.hasResult {
		// An error answer (or an answer without a result): its message is not kept.
		msg.Error = &errorObject{Code: -32603, Message: what}
	} else {
		text, others := sc.text()
		var note string
		if text == "" {
			note = fmt.Sprintf("[truncated: %s; none of its text is kept", what)
		} else {
			note = fmt.Sprintf("[truncated: %s; this is the first %d bytes of its text", what, len(text))
			text += "\n"
		}
		if others > 0 {
			note += fmt.Sprintf("; %d content blocks of other types are left out", others)
		}
		note += "]"
		msg.Result = &result{Content: []content{{Type: "text", Text: text + note}}, IsError: sc.isError()}
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil
	}
	return b
}
