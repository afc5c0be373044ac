package longterm

import (
	"testing"
	"time"
)

// TestVectorCacheBounds: the cache keeps at most its bytes (least recently used out first), drops
// the sets no search read for a while, and patches a set only at the counter it was read at.
func TestVectorCacheBounds(t *testing.T) {
	set := func(owner string, gen int64, rows int) *vectorSet {
		v := &vectorSet{owner: owner, model: "m", gen: gen}
		for i := range rows {
			v.dims = 2
			v.add("ns", owner+string(rune('a'+i)), nil, []float32{1, 0})
		}
		return v
	}
	one := set("a", 1, 4).bytes()
	c := newVectorCache(2*one + one/2)
	c.put(set("a", 1, 4))
	c.put(set("b", 1, 4))
	c.put(set("c", 1, 4)) // a goes
	if c.byOwn["a"] != nil || c.byOwn["b"] == nil || c.byOwn["c"] == nil || c.used > c.max {
		t.Fatalf("after three sets: %v, used %d of %d", c.byOwn, c.used, c.max)
	}
	c.apply("b", "m", 2, 3, []change{{ns: "ns", key: "new", vec: []float32{0, 1}}}) // not at 2: left alone
	if c.byOwn["b"].gen != 1 || len(c.byOwn["b"].keys) != 4 {
		t.Fatalf("a patch at another counter changed the set: %+v", c.byOwn["b"])
	}
	c.apply("b", "m", 1, 3, []change{{ns: "ns", key: "ba"}, {ns: "ns", key: "new", vec: []float32{0, 1}}})
	if b := c.byOwn["b"]; b.gen != 3 || len(b.keys) != 4 || b.keys[3] != "new" {
		t.Fatalf("patched set: %+v", b)
	}
	c.dropIdle(time.Now().Add(time.Second))
	if len(c.byOwn) != 0 || c.used != 0 || c.lru.Len() != 0 {
		t.Fatalf("after dropping idle sets: %v, used %d", c.byOwn, c.used)
	}
}
