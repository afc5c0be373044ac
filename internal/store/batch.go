package store

// Batcher gathers a dump's rows into batches of at most N for a Snapshot.Rows callback.
type Batcher struct {
	// N is the most rows a batch holds (at least 1).
	N int
	// Fn is given every full batch and, at Flush, the rest.
	Fn  func(rows [][]any) error
	buf [][]any
}

// Add adds a row and hands on the batch when it is full.
func (b *Batcher) Add(row []any) error {
	if b.buf == nil {
		b.buf = make([][]any, 0, max(b.N, 1))
	}
	if b.buf = append(b.buf, row); len(b.buf) < max(b.N, 1) {
		return nil
	}
	err := b.Fn(b.buf)
	b.buf = b.buf[:0]
	return err
}

// Flush hands on the rows of a batch not yet full, if any.
func (b *Batcher) Flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	err := b.Fn(b.buf)
	b.buf = b.buf[:0]
	return err
}
