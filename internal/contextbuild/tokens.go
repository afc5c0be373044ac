package contextbuild

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/carryon-hub/carryon"
	"github.com/tiktoken-go/tokenizer"
)

// Counter counts tokens of text for one model family.
type Counter struct {
	codec tokenizer.Codec
	// Estimated is true when no vocabulary of the model is known and the count is an estimate.
	Estimated bool
	Encoding  string
}

var counters sync.Map // model name -> *Counter

// CounterFor returns the token counter of a model: the model's own vocabulary for OpenAI model
// families (o200k_base for gpt-4o, gpt-4.1, gpt-5, o-series; cl100k_base for gpt-4 and
// gpt-3.5), and for every other model (Claude, Llama, Qwen, the scripted model) an estimate with
// o200k_base, which is close for English text and code but not exact.
func CounterFor(model string) *Counter {
	if c, ok := counters.Load(model); ok {
		return c.(*Counter)
	}
	c := &Counter{}
	if codec, err := tokenizer.ForModel(tokenizer.Model(strings.ToLower(model))); err == nil {
		c.codec, c.Encoding = codec, codec.GetName()
	} else {
		codec, _ := tokenizer.Get(tokenizer.O200kBase)
		c.codec, c.Encoding, c.Estimated = codec, codec.GetName(), true
	}
	counters.Store(model, c)
	return c
}

// Count returns the tokens of s.
func (c *Counter) Count(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.codec.Count(s)
	if err != nil {
		return (len(s) + 3) / 4
	}
	return n
}

// message returns the tokens of a stored message with its wire overhead, counted once per message
// and remembered (a message never changes: history is append-only).
func (c *Counter) message(m *carryon.Message) int {
	key := msgKey{c.Encoding, m.SessionID, m.Seq}
	if n, ok := messageCounts.Load(key); ok {
		return n.(int)
	}
	n := c.Count(m.Content) + c.Count(string(m.ToolCalls)) + perMessage
	if messageCount.Add(1) > maxCachedMessages {
		messageCounts.Clear() // a crude bound: the cache refills with the sessions in use
		messageCount.Store(0)
	}
	messageCounts.Store(key, n)
	return n
}

// msgKey names a stored message under one vocabulary.
type msgKey struct {
	encoding, session string
	seq               int64
}

// maxCachedMessages bounds the token counts kept in memory.
const maxCachedMessages = 200_000

var (
	messageCounts sync.Map // msgKey -> int
	messageCount  atomic.Int64
)

// perMessage is the overhead of one chat message in the wire format (role and separators), as
// OpenAI documents it for its chat models.
const perMessage = 4
