package longterm

import (
	"math"
	"math/bits"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas32"
)

// A large set is searched in two steps: a prefilter scores every row from a compact code (one
// sign bit a dimension, 48 bytes at 384 dimensions, and the row's L1 norm), then the best
// candidates are scored exactly with their float32 values and the exact order among them is the
// answer. The code's estimate of q·x is q·sign(x)/|x|₁ (the estimator of RaBitQ, Gao and Long,
// 2024), the query kept at 4 bits a dimension: the sum is a few popcounts a word. It reads a
// thirtieth of the bytes exact scoring reads, which is what bounds exact scoring here (memory
// bandwidth). docs/BENCHMARKS.md has the recall and timings that chose the constants.

const (
	// prefilterRows is the size of a set from which searches use the prefilter; a smaller set is
	// scored exactly, every row.
	prefilterRows = 20000
	// prefilterMin and prefilterPerHit size the candidates scored exactly: the larger of
	// prefilterMin and prefilterPerHit a result asked for.
	prefilterMin    = 6144
	prefilterPerHit = 64
	// queryBits is the precision of the query in the prefilter's sum.
	queryBits = 4
)

// candidates is the number of rows scored exactly for k results of a set of n rows; n: all of
// them (exact scoring).
func candidates(k, n int) int {
	if n < prefilterRows {
		return n
	}
	c := max(prefilterMin, k*prefilterPerHit)
	if c*2 > n {
		return n // the prefilter would save less than half the work
	}
	return c
}

// encode returns the sign bits of vec (bit set: a positive value), words uint64s, and its L1
// norm.
func encode(vec []float32, words int) ([]uint64, float32) {
	b := make([]uint64, words)
	var l1 float32
	for i, x := range vec {
		if x > 0 {
			b[i>>6] |= 1 << (i & 63)
		}
		l1 += float32(math.Abs(float64(x)))
	}
	return b, l1
}

// quantQuery is a query as the prefilter's sum reads it: q[i] ≈ lo + delta·u[i] with u[i] of
// queryBits bits, planes[b] holding bit b of every u[i] (as the rows' codes hold their signs).
type quantQuery struct {
	planes    [queryBits][]uint64
	lo, delta float32
	sum       float32 // Σ q[i]
}

func quantize(q []float32, words int) quantQuery {
	var qq quantQuery
	lo, hi := q[0], q[0]
	for _, x := range q {
		lo, hi = min(lo, x), max(hi, x)
		qq.sum += x
	}
	qq.lo = lo
	levels := float32(1<<queryBits - 1)
	if hi > lo {
		qq.delta = (hi - lo) / levels
	}
	for b := range qq.planes {
		qq.planes[b] = make([]uint64, words)
	}
	for i, x := range q {
		var u uint
		if qq.delta > 0 {
			u = uint(math.Round(float64((x - lo) / qq.delta)))
		}
		for b := range queryBits {
			if u>>b&1 == 1 {
				qq.planes[b][i>>6] |= 1 << (i & 63)
			}
		}
	}
	return qq
}

// estimates returns the prefilter's estimate of q·x for every row: with S = Σ q[i] over the
// row's positive dimensions, q·sign(x) = 2S − Σq, divided by |x|₁.
func (v *vectorSet) estimates(q []float32) []float32 {
	est, _, _ := v.estimatesRange(q)
	return est
}

// estimatesRange is estimates with their least and greatest value.
func (v *vectorSet) estimatesRange(q []float32) ([]float32, float32, float32) {
	n, w := len(v.keys), v.words
	qq := quantize(q, w)
	// The planes word by word: planes[j][b] is word j of plane b.
	planes := make([][queryBits]uint64, w)
	for j := range w {
		for b := range queryBits {
			planes[j][b] = qq.planes[b][j]
		}
	}
	out := make([]float32, n)
	var mu sync.Mutex
	least, most := float32(math.Inf(1)), float32(math.Inf(-1))
	parallel(n, parallelRows, func(lo, hi int) {
		codes, l1, est := v.bits[lo*w:hi*w], v.l1[lo:hi], out[lo:hi]
		partLeast, partMost := float32(math.Inf(1)), float32(math.Inf(-1))
		defer func() {
			mu.Lock()
			least, most = min(least, partLeast), max(most, partMost)
			mu.Unlock()
		}()
		for i := range est {
			row := codes[i*w : i*w+w]
			var pos, acc int
			for j, x := range row {
				p := &planes[j]
				pos += bits.OnesCount64(x)
				acc += bits.OnesCount64(p[0]&x) + bits.OnesCount64(p[1]&x)<<1 + bits.OnesCount64(p[2]&x)<<2 + bits.OnesCount64(p[3]&x)<<3
			}
			var e float32
			if l := l1[i]; l > 0 {
				e = (2*(qq.lo*float32(pos)+qq.delta*float32(acc)) - qq.sum) / l
			}
			est[i] = e
			partLeast, partMost = min(partLeast, e), max(partMost, e)
		}
	})
	return out, least, most
}

// histBins is the resolution of the histogram that finds the candidates' threshold.
const histBins = 4096

// bestEstimated returns at least c of the rows passing keep with the highest estimates est, all
// between lo and hi (all of them when fewer pass; more than c when estimates tie at the
// threshold), in row order. It finds
// the threshold in a histogram of the estimates (linear, where a heap of c is not), calling keep
// only for the rows above it but when too few of those pass.
func bestEstimated(est []float32, lo, hi float32, c int, keep func(int) bool) []hit {
	scale := float32(histBins-1) / max(hi-lo, 1e-12)
	var hist [histBins]int32
	for _, e := range est {
		hist[int((e-lo)*scale)]++
	}
	t, sum := histBins-1, int32(hist[histBins-1])
	for t > 0 && sum < int32(c) {
		t--
		sum += hist[t]
	}
	out := make([]hit, 0, sum)
	for i, e := range est {
		if int((e-lo)*scale) >= t && (keep == nil || keep(i)) {
			out = append(out, hit{i, e})
		}
	}
	if len(out) >= c || t == 0 || keep == nil {
		return out
	}
	// Too few of the best rows pass keep: the best c of the rows that pass.
	return best(est, nil, c, keep)
}

// parallel runs run over [0, n) in parts across the cores, each part at least minPart long.
func parallel(n, minPart int, run func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/minPart)
	if parts <= 1 {
		run(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + parts - 1) / parts
	for lo := 0; lo < n; lo += step {
		wg.Go(func() { run(lo, min(lo+step, n)) })
	}
	wg.Wait()
}

// rescore replaces the estimated scores of hits (in row order, which reads the rows in memory
// order) by the exact ones.
func (v *vectorSet) rescore(q []float32, hits []hit) {
	x := blas32.Vector{N: v.dims, Inc: 1, Data: q}
	run := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			i := hits[j].i
			hits[j].score = blas32.Dot(x, blas32.Vector{N: v.dims, Inc: 1, Data: v.mat[i*v.dims : (i+1)*v.dims]})
		}
	}
	parallel(len(hits), 2048, run)
}
