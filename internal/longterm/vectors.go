package longterm

import (
	"container/heap"
	"container/list"
	"context"
	"sync"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/store"
)

// The vectors of a user's memory, kept in memory for search. A semantic search scores every
// vector of the user exactly below prefilterRows vectors; above, it scores every vector's compact
// code and then the best candidates exactly (prefilter.go). The store is read again only when the user's memory counter moved (a write
// on any instance), which one point read checks in the search's own transaction. Writes of this
// instance patch the cached vectors instead of dropping them (apply).

// vectorSet is one user's vectors of one model: row i is mat[i*dims:(i+1)*dims].
type vectorSet struct {
	owner, model string
	gen          int64
	dims         int
	ns, keys     []string
	exp          []int64 // unix micros, 0: never
	mat          []float32
	words        int      // uint64s of a row's code: (dims+63)/64
	bits         []uint64 // row i's sign bits: bits[i*words:(i+1)*words]
	l1           []float32
	elem         *list.Element
	used         time.Time // when a search last read it (under the cache's lock)
}

func (v *vectorSet) bytes() int64 {
	return int64(len(v.mat))*4 + int64(len(v.bits))*8 + int64(len(v.l1))*4 + int64(len(v.keys))*64
}

// vectorCache is a bounded LRU of vectorSets by owner.
type vectorCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	lru   *list.List // front: most recently used
	byOwn map[string]*vectorSet
}

func newVectorCache(max int64) *vectorCache {
	return &vectorCache{max: max, lru: list.New(), byOwn: map[string]*vectorSet{}}
}

// get returns the owner's vectors of model as the transaction sees them: the cached set when the
// owner's counter is where it was when it was read (prev, when the caller knows it, else read
// here), else read from the store and cached.
func (c *vectorCache) get(ctx context.Context, tx store.Tx, owner, model string, prev int64) (*vectorSet, error) {
	gen := prev
	if gen < 0 {
		var err error
		if gen, err = tx.LongTermGeneration(ctx, owner); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if v := c.byOwn[owner]; v != nil && v.gen == gen && v.model == model {
		c.lru.MoveToFront(v.elem)
		v.used = time.Now()
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()
	gen2, rows, err := tx.LongTermVectors(ctx, owner, model)
	if err != nil {
		return nil, err
	}
	if prev >= 0 {
		gen2 = prev // a locked write: its own moves of the counter are not in the rows yet
	}
	v := newVectorSet(owner, model, gen2, rows)
	c.put(v)
	return v, nil
}

// warm reads the owner's vectors of model into the cache when it holds none of them (the
// owner's first search on this instance), in a read transaction of its own, and makes the set
// after that transaction ended: reading and coding 100,000 vectors can take longer on a busy
// machine than a PostgreSQL transaction may stay idle (store/postgres.IdleInTransactionTimeout),
// which the search's own transaction then would. A set that is there but stale is read again in
// the search's transaction, as get does.
func (c *vectorCache) warm(ctx context.Context, st store.Store, owner, model string) error {
	c.mu.Lock()
	v := c.byOwn[owner]
	c.mu.Unlock()
	if v != nil && v.model == model {
		return nil
	}
	var gen int64
	var rows []store.VectorRow
	if err := st.Read(ctx, func(tx store.Tx) error {
		var err error
		gen, rows, err = tx.LongTermVectors(ctx, owner, model)
		return err
	}); err != nil {
		return err
	}
	c.put(newVectorSet(owner, model, gen, rows))
	return nil
}

// newVectorSet is the set of rows at counter gen: the rows of the first row's size (another size
// made by the same model name is stale).
func newVectorSet(owner, model string, gen int64, rows []store.VectorRow) *vectorSet {
	v := &vectorSet{owner: owner, model: model, gen: gen}
	if len(rows) > 0 {
		v.dims = len(rows[0].Values)
		v.words = (v.dims + 63) / 64
		v.ns, v.keys, v.exp = make([]string, 0, len(rows)), make([]string, 0, len(rows)), make([]int64, 0, len(rows))
		v.mat, v.bits, v.l1 = make([]float32, 0, len(rows)*v.dims), make([]uint64, 0, len(rows)*v.words), make([]float32, 0, len(rows))
	}
	for _, r := range rows {
		if len(r.Values) == v.dims {
			v.add(r.Namespace, r.Key, r.ExpiresAt, r.Values)
		}
	}
	return v
}

func (v *vectorSet) add(ns, key string, exp *time.Time, vec []float32) {
	var e int64
	if exp != nil {
		e = exp.UnixMicro()
	}
	v.words = (len(vec) + 63) / 64
	b, l1 := encode(vec, v.words)
	v.addRow(ns, key, e, vec, b, l1)
}

// addRow appends a row with its code.
func (v *vectorSet) addRow(ns, key string, exp int64, vec []float32, code []uint64, l1 float32) {
	v.ns, v.keys, v.exp = append(v.ns, ns), append(v.keys, key), append(v.exp, exp)
	v.mat = append(v.mat, vec...)
	v.bits, v.l1 = append(v.bits, code...), append(v.l1, l1)
}

// put caches v in place of the owner's set, evicting the least recently used sets over the bound.
func (c *vectorCache) put(v *vectorSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byOwn[v.owner]; old != nil {
		c.used -= old.bytes()
		c.lru.Remove(old.elem)
		delete(c.byOwn, v.owner)
	}
	if v.bytes() > c.max {
		return
	}
	v.used = time.Now()
	v.elem = c.lru.PushFront(v)
	c.byOwn[v.owner] = v
	c.used += v.bytes()
	for c.used > c.max {
		last := c.lru.Back().Value.(*vectorSet)
		c.used -= last.bytes()
		c.lru.Remove(last.elem)
		delete(c.byOwn, last.owner)
	}
}

// dropIdle removes the sets no search read since before, so that the vectors of a user who
// stopped searching (or was forgotten) do not stay in memory.
func (c *vectorCache) dropIdle(before time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Back(); e != nil; {
		v := e.Value.(*vectorSet)
		prev := e.Prev()
		if v.used.Before(before) {
			c.used -= v.bytes()
			c.lru.Remove(e)
			delete(c.byOwn, v.owner)
		}
		e = prev
	}
}

// change is what a committed write did to one item's vector: set (vec not nil) or removed.
type change struct {
	ns, key string
	exp     *time.Time
	vec     []float32
}

// apply patches the owner's cached set with a committed write that held the owner's memory
// (LockLongTerm) from counter before to counter after: only a set at before is patched, and it
// is then at after; any other is left to be read again.
func (c *vectorCache) apply(owner, model string, before, after int64, ch []change) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.byOwn[owner]
	if v == nil || v.gen != before || v.model != model {
		return
	}
	// Copy on write: a search may be scoring v right now.
	n := &vectorSet{owner: owner, model: model, gen: after, dims: v.dims, words: v.words, elem: v.elem}
	drop := map[[2]string]bool{}
	for _, x := range ch {
		drop[[2]string{x.ns, x.key}] = true
	}
	n.ns, n.keys, n.exp = make([]string, 0, len(v.keys)+1), make([]string, 0, len(v.keys)+1), make([]int64, 0, len(v.keys)+1)
	n.mat = make([]float32, 0, len(v.mat)+v.dims)
	n.bits, n.l1 = make([]uint64, 0, len(v.bits)+v.words), make([]float32, 0, len(v.l1)+1)
	for i := range v.keys {
		if !drop[[2]string{v.ns[i], v.keys[i]}] {
			n.addRow(v.ns[i], v.keys[i], v.exp[i], v.mat[i*v.dims:(i+1)*v.dims], v.bits[i*v.words:(i+1)*v.words], v.l1[i])
		}
	}
	for _, x := range ch {
		if x.vec != nil && (n.dims == 0 || len(x.vec) == n.dims) {
			n.dims = len(x.vec)
			n.add(x.ns, x.key, x.exp, x.vec)
		}
	}
	c.used += n.bytes() - v.bytes()
	n.used = v.used
	n.elem.Value = n
	c.byOwn[owner] = n
}

// hit is a vector's similarity to a query.
type hit struct {
	i     int
	score float32
}

type hitHeap []hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(hit)) }
func (h *hitHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// top returns the k rows of v most similar to q (unit length, as the rows are), best first,
// among the unexpired rows at now in the namespace subtree ns (exact namespace when exact). Below
// prefilterRows rows it scores every row exactly: a matrix-vector product (gonum's BLAS, SIMD on
// amd64), split across the cores for large sets, then a heap of the best k. Above, it takes the
// best candidates(k, n) rows by the prefilter's estimate, scores those exactly and returns the
// best k of them.
func (v *vectorSet) top(q []float32, k int, ns string, exact bool, now time.Time) []hit {
	n := len(v.keys)
	if v.dims == 0 || len(q) != v.dims || k <= 0 || n == 0 {
		return nil
	}
	nowUS := now.UnixMicro()
	keep := func(i int) bool {
		if e := v.exp[i]; e != 0 && e <= nowUS {
			return false
		}
		return exact && v.ns[i] == ns || !exact && carryon.InNamespace(v.ns[i], ns)
	}
	c := candidates(k, n)
	if c >= n {
		return best(v.scores(q), nil, k, keep)
	}
	return v.prefiltered(q, k, c, keep)
}

// prefiltered returns the best k of the c rows passing keep that the prefilter estimates best,
// scored exactly.
func (v *vectorSet) prefiltered(q []float32, k, c int, keep func(int) bool) []hit {
	est, lo, hi := v.estimatesRange(q)
	hits := bestEstimated(est, lo, hi, c, keep)
	v.rescore(q, hits)
	scores := make([]float32, len(hits))
	rows := make([]int, len(hits))
	for j, h := range hits {
		scores[j], rows[j] = h.score, h.i
	}
	return best(scores, rows, k, nil)
}

// best returns the k best scores whose row passes keep (nil: every row), best first; score j is
// row rows[j] (rows nil: row j).
func best(scores []float32, rows []int, k int, keep func(int) bool) []hit {
	h := make(hitHeap, 0, k+1)
	for j, s := range scores {
		if len(h) == k && s <= h[0].score {
			continue
		}
		i := j
		if rows != nil {
			i = rows[j]
		}
		if keep != nil && !keep(i) {
			continue
		}
		if len(h) < k {
			heap.Push(&h, hit{i, s})
		} else {
			h[0] = hit{i, s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(hit)
	}
	return out
}

// parallelRows is the number of rows above which scoring is split across the cores.
const parallelRows = 8192

// scores returns the dot product of q with every row (the cosine similarity of unit vectors).
func (v *vectorSet) scores(q []float32) []float32 {
	n := len(v.keys)
	out := make([]float32, n)
	x := blas32.Vector{N: v.dims, Inc: 1, Data: q}
	parallel(n, parallelRows, func(lo, hi int) {
		a := blas32.General{Rows: hi - lo, Cols: v.dims, Stride: v.dims, Data: v.mat[lo*v.dims : hi*v.dims]}
		blas32.Gemv(blas.NoTrans, 1, a, x, 0, blas32.Vector{N: hi - lo, Inc: 1, Data: out[lo:hi]})
	})
	return out
}

// dot is the dot product of two vectors of the same length, for the few vectors a write compares
// outside a set.
func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return -2
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
