package store

import (
	"context"
	"errors"
)

// A read budget bounds the bytes one API read holds in memory: a page of messages or events
// stops early, before the row that would go past it, and says so (the reader pages on from where
// it stopped). The first row is always taken, however large, so a page is never empty while rows
// remain. Reads without a budget (the context builder, the engine, copies) read everything they
// ask for.

// budgetKey is the context key of a read's budget.
type budgetKey struct{}

// ReadBudget is the bytes a read may still take, and whether it stopped because of them. It
// belongs to one read transaction (one goroutine).
type ReadBudget struct {
	left  int64
	taken bool
	spent bool
}

// WithReadBudget returns ctx carrying a budget of n bytes for the reads made with it, and the
// budget, to ask afterwards whether a read stopped at it.
func WithReadBudget(ctx context.Context, n int64) (context.Context, *ReadBudget) {
	b := &ReadBudget{left: n}
	return context.WithValue(ctx, budgetKey{}, b), b
}

// ReadBudgetOf returns the budget of ctx, or nil when its reads have none.
func ReadBudgetOf(ctx context.Context) *ReadBudget {
	b, _ := ctx.Value(budgetKey{}).(*ReadBudget)
	return b
}

// Take counts a row of n bytes against the budget and reports whether it fits; the first row
// always does. A row that does not fit marks the budget spent, and no later row fits either. A
// nil budget takes everything.
func (b *ReadBudget) Take(n int64) bool {
	switch {
	case b == nil:
		return true
	case b.spent:
		return false
	case b.taken && n > b.left:
		b.spent = true
		return false
	}
	b.taken, b.left = true, b.left-n
	return true
}

// Spent reports whether a read stopped because the next row did not fit.
func (b *ReadBudget) Spent() bool { return b != nil && b.spent }

// ErrBudgetSpent is what a driver's range read returns, with the rows it took, when the read
// budget stopped it: the chain reader ends there instead of reading on.
var ErrBudgetSpent = errors.New("store: the read budget is spent")
