package longterm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// unit returns v scaled to length 1.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func gaussian(r *rand.Rand, dims int, sigma float64, around []float32) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64() * sigma)
		if around != nil {
			v[i] += around[i]
		}
	}
	return unit(v)
}

// testSet is a set of n rows of dims for the prefilter's tests, and queries for it: random
// (rows and queries uniform on the sphere: the worst case of a prefilter, nothing stands out),
// or clustered (rows around topics, a tenth of them near duplicates of another row; queries near
// a topic or near a row).
func testSet(seed uint64, kind string, n, dims, queries int) (*vectorSet, [][]float32) {
	r := rand.New(rand.NewPCG(seed, 11))
	v := &vectorSet{owner: "usr_a", model: "m", dims: dims}
	var qs [][]float32
	switch kind {
	case "random":
		for i := range n {
			v.add("notes", fmt.Sprintf("k%d", i), nil, gaussian(r, dims, 1, nil))
		}
		for range queries {
			qs = append(qs, gaussian(r, dims, 1, nil))
		}
	case "clustered":
		topics := make([][]float32, 300)
		for i := range topics {
			topics[i] = gaussian(r, dims, 1, nil)
		}
		for i := range n {
			var row []float32
			if i > 0 && i%10 == 0 {
				prev := v.mat[(i-1)*dims : i*dims]
				row = gaussian(r, dims, 0.15/math.Sqrt(float64(dims)), prev) // a near duplicate
			} else {
				row = gaussian(r, dims, (0.6+r.Float64())/math.Sqrt(float64(dims)), topics[r.IntN(len(topics))])
			}
			v.add("notes", fmt.Sprintf("k%d", i), nil, row)
		}
		for j := range queries {
			if j%2 == 0 {
				qs = append(qs, gaussian(r, dims, 1.2/math.Sqrt(float64(dims)), topics[r.IntN(len(topics))]))
			} else {
				i := r.IntN(n)
				qs = append(qs, gaussian(r, dims, 0.8/math.Sqrt(float64(dims)), v.mat[i*dims:(i+1)*dims]))
			}
		}
	}
	return v, qs
}

// exactTop is the exact k best rows of every query.
func exactTop(v *vectorSet, qs [][]float32, k int) [][]hit {
	var out [][]hit
	for _, q := range qs {
		out = append(out, best(v.scores(q), nil, k, nil))
	}
	return out
}

// recall is the mean share of the exact k best rows (exact) that got is among.
func recall(qs [][]float32, exact [][]hit, got func(q []float32) []hit) float64 {
	var sum float64
	for j, q := range qs {
		want := map[int]bool{}
		for _, h := range exact[j] {
			want[h.i] = true
		}
		k := len(exact[j])
		found := 0
		for _, h := range got(q) {
			if want[h.i] {
				found++
			}
		}
		sum += float64(found) / float64(k)
	}
	return sum / float64(len(qs))
}

// TestPrefilterRecallTable prints recall@10 and @50 and the time of a search by candidates, at
// 100k rows of 384 dimensions (CARRYON_PREFILTER_TABLE=1; docs/BENCHMARKS.md quotes it).
func TestPrefilterRecallTable(t *testing.T) {
	if os.Getenv("CARRYON_PREFILTER_TABLE") == "" {
		t.Skip("CARRYON_PREFILTER_TABLE is not set")
	}
	for _, kind := range []string{"random", "clustered"} {
		v, qs := testSet(3, kind, 100000, 384, 100)
		start := time.Now()
		for _, q := range qs {
			v.top(q, 10, "", false, time.Now())
		}
		t.Logf("%s: top(10) as configured: %.2f ms a search", kind, float64(time.Since(start).Microseconds())/1000/float64(len(qs)))
		start = time.Now()
		for _, q := range qs {
			best(v.scores(q), nil, 10, nil)
		}
		t.Logf("%s: exact: %.2f ms a search", kind, float64(time.Since(start).Microseconds())/1000/float64(len(qs)))
		exact := map[int][][]hit{10: exactTop(v, qs, 10), 50: exactTop(v, qs, 50)}
		for _, c := range []int{1000, 2000, 4096, 6144, 8192} {
			for _, k := range []int{10, 50} {
				rc := recall(qs, exact[k], func(q []float32) []hit { return v.prefiltered(q, k, c, nil) })
				t.Logf("%s: candidates %d: recall@%d %.4f", kind, c, k, rc)
			}
		}
	}
}

// BenchmarkPrefilterParts: the prefilter's steps against exact scoring, at 100k rows of 384.
func BenchmarkPrefilterParts(b *testing.B) {
	v, qs := testSet(3, "random", 100000, 384, 1)
	q := qs[0]
	b.Run("exact-scores", func(b *testing.B) {
		for b.Loop() {
			v.scores(q)
		}
	})
	b.Run("estimates", func(b *testing.B) {
		for b.Loop() {
			v.estimates(q)
		}
	})
	est := v.estimates(q)
	b.Run("best-4096", func(b *testing.B) {
		for b.Loop() {
			bestEstimated(est, 4096, nil)
		}
	})
	hits := bestEstimated(est, 4096, nil)
	b.Run("rescore-4096", func(b *testing.B) {
		for b.Loop() {
			v.rescore(q, hits)
		}
	})
}
