package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/carryon-hub/carryon"
)

// Vector is a long-term memory item's embedding: unit-length values and the embedding model that
// made them.
type Vector struct {
	Model  string
	Values []float32
}

// VectorRow is one vector of an owner's memory, as a semantic search reads it.
type VectorRow struct {
	Namespace, Key string
	// ExpiresAt is when the item stops being returned (nil: never).
	ExpiresAt *time.Time
	Values    []float32
}

// StaleItem is an item whose vector is missing or was made by another model than the current
// one: the re-embedding job's work.
type StaleItem struct {
	Owner, Namespace, Key string
	Version               int64
	// Document is the text to embed (EmbeddingText of the item).
	Document string
}

// LongTermVectors stores the vectors of long-term memory items and the counter that says when an
// owner's memory changed. Every write of an item (put, delete, purge) clears its vector and moves
// the owner's counter on; the vector of the new text is set in the same transaction, or later.
type LongTermVectors interface {
	// SetLongTermVector sets the vector of the owner's item if the item is at version, and
	// reports whether it was (false: the item changed or went since; nothing is written).
	SetLongTermVector(ctx context.Context, owner, namespace, key string, version int64, v Vector) (bool, error)
	// LongTermVectors returns the owner's memory counter and then every vector of the owner's
	// items made by model (expired ones too: the caller filters at its now), read in that order
	// so that the vectors are at least as new as the counter.
	LongTermVectors(ctx context.Context, owner, model string) (int64, []VectorRow, error)
	// LongTermGeneration returns the owner's memory counter (0 before the first write).
	LongTermGeneration(ctx context.Context, owner string) (int64, error)
	// LockLongTerm moves the owner's memory counter on and returns it, and holds the owner's
	// memory for this transaction: a concurrent LockLongTerm (or write) of the same owner waits
	// for its commit, so the counter before it (one less) is the last committed one.
	LockLongTerm(ctx context.Context, owner string) (int64, error)
	// PutLongTermVersion keeps a value that a consolidating write replaced.
	PutLongTermVersion(ctx context.Context, owner, namespace, key string, v *carryon.LongTermVersion) error
	// ListLongTermVersions returns the kept earlier values of an item, newest first.
	ListLongTermVersions(ctx context.Context, owner, namespace, key string) ([]*carryon.LongTermVersion, error)
	// StaleLongTermItems returns up to limit unexpired items of any owner with text to embed
	// whose vector is missing or not made by model, after the (owner, namespace, key) given.
	// It is for the re-embedding job only.
	StaleLongTermItems(ctx context.Context, model string, after [3]string, now time.Time, limit int) ([]StaleItem, error)
}

// EncodeVector packs v as little-endian float32 values, the stored form of a vector.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeVector unpacks what EncodeVector packed (a trailing partial value is dropped).
func DecodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// EmbeddingText is the text of an item that its vector is made of: its text, or, without text,
// the strings and numbers of its value (as its search document, without namespace and key).
func EmbeddingText(text string, value json.RawMessage) string {
	if text != "" {
		return text
	}
	var v any
	if json.Unmarshal(value, &v) != nil {
		return ""
	}
	var b strings.Builder
	valueText(&b, v)
	return strings.TrimSpace(b.String())
}
