// Package carryon is the shared vocabulary of the carryon session hub: the domain types (sessions,
// messages, working memory, users), the service interfaces the hub implements and the HTTP client
// re-implements, and the error codes every layer speaks.
//
// It imports nothing of the project. Business rules live in the hub services (package sessions,
// users), storage in package store and its drivers, transport in package httpapi.
package carryon

import (
	"context"
	"time"
)

// Version is the version of the carryon program, set at build time with -ldflags.
var Version = "dev"

// Defaults for sessions and idempotency keys; every one of them is a server setting.
const (
	// DefaultIdleTTL is how long a session may stay idle before it expires.
	DefaultIdleTTL = 30 * 24 * time.Hour
	// DefaultPurgeAfter is how long an expired session keeps its history before it is purged.
	DefaultPurgeAfter = 90 * 24 * time.Hour
	// DefaultIdempotencyTTL is how long a request id (idempotency key) and its answer are kept.
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultMessageWindow is how many recent messages a session read returns.
	DefaultMessageWindow = 20
	// MaxMessageWindow bounds the messages a single read may return.
	MaxMessageWindow = 1000
	// DefaultPageSize is the page size of every listing when no limit is given.
	DefaultPageSize = 50
	// DefaultMaxReadBytes bounds the bytes of messages or events one page of a read holds: a page
	// stops before the item that would go past it (the first item is always in), and its
	// next_cursor goes on from there.
	DefaultMaxReadBytes = 8 << 20
	// MaxAppendMessages bounds the messages a single append may carry.
	MaxAppendMessages = 500
	// MaxRequestIDLength bounds a request id.
	MaxRequestIDLength = 255
)

// WriteOptions are the concurrency and retry controls every write accepts.
type WriteOptions struct {
	// ExpectedVersion, when set, refuses the write with EVERSION unless the session is at that version.
	ExpectedVersion *int64 `json:"expected_version,omitempty"`
	// RequestID is an idempotency key scoped to the caller: a repeat with the same input returns the
	// first answer and changes nothing; a repeat with another input is refused with EKEYREUSED.
	RequestID string `json:"request_id,omitempty"`
}

// RetryOptions are the retry controls of a write whose target has no version (a run, a
// long-term memory item, an API key): a request id only. Such writes have nothing an expected
// version could name.
type RetryOptions struct {
	// RequestID is an idempotency key scoped to the caller, as in WriteOptions.
	RequestID string `json:"request_id,omitempty"`
}

// RequestIDLookup tells a front door whether the caller's request id was used already, before
// the door looks anything up to translate a request. A door whose translation depends on state
// that the first request changed (which message an item id names, whether a later run followed
// a response, which run of a conversation waits) sends a repeat straight to the write the first
// request made, which answers it as it did then, or refuses another request with the same id
// (EKEYREUSED). The session service implements it.
type RequestIDLookup interface {
	// RequestIDUsed reports whether the caller's request id names a kept record (a request with
	// it was answered, or is still in flight), and the session its write belongs to: the session
	// written, or the one a create, fork or run start made or ran on ("" for a write of no
	// session, such as a session's delete). EINVALID for an id no write would take.
	RequestIDUsed(ctx context.Context, id string) (session string, used bool, err error)
}

// WriteReceipt tells the caller of a write how it was served. Install one with
// NewContextWithReceipt before the call; the service fills it in.
type WriteReceipt struct {
	// Replayed is true when the answer is the stored answer of an earlier request with the same id.
	Replayed bool
	// Existing is true when a create found what it would make there already (a session with the
	// same external id) and answered it unchanged.
	Existing bool
}

type receiptKey struct{}

// NewContextWithReceipt returns a context that carries r, for a service to fill in.
func NewContextWithReceipt(ctx context.Context, r *WriteReceipt) context.Context {
	return context.WithValue(ctx, receiptKey{}, r)
}

// ReceiptFromContext returns the receipt installed in ctx, or nil.
func ReceiptFromContext(ctx context.Context) *WriteReceipt {
	r, _ := ctx.Value(receiptKey{}).(*WriteReceipt)
	return r
}

// Ptr returns a pointer to v; handy for optional fields such as WriteOptions.ExpectedVersion.
func Ptr[T any](v T) *T { return &v }
