package agents

import (
	"math"

	"github.com/carryon-hub/carryon"
)

// maxPrice bounds a price in USD per million tokens.
const maxPrice = 1e6

// rawPrice is one model's entry under the file's prices key, in USD per million tokens.
type rawPrice struct {
	Input  *float64 `yaml:"input"`
	Output *float64 `yaml:"output"`
	Cached *float64 `yaml:"cached"`
}

// prices resolves the file's prices: input and output are required, cached defaults to input.
// A model without an entry costs nothing in money (its tokens still count): docs/AGENTS.md.
func (v *validator) prices(raw map[string]*rawPrice) map[string]carryon.Price {
	out := map[string]carryon.Price{}
	for _, model := range sortedKeys(raw) {
		at := "prices." + model
		r := raw[model]
		if r == nil || r.Input == nil || r.Output == nil {
			v.fail(at, "needs input and output, in USD per million tokens (cached is optional)")
			continue
		}
		ok := true
		for _, f := range []struct {
			key string
			val *float64
		}{{"input", r.Input}, {"output", r.Output}, {"cached", r.Cached}} {
			if f.val != nil && (math.IsNaN(*f.val) || *f.val < 0 || *f.val > maxPrice) {
				v.fail(at+"."+f.key, "must be a number from 0 to %g (USD per million tokens), not %g", float64(maxPrice), *f.val)
				ok = false
			}
		}
		if !ok {
			continue
		}
		p := carryon.Price{Input: *r.Input, Output: *r.Output, Cached: *r.Input}
		if r.Cached != nil {
			p.Cached = *r.Cached
		}
		out[model] = p
	}
	return out
}

// Price returns the price of a model, false when the file names none.
func (s *Set) Price(model string) (carryon.Price, bool) {
	p, ok := s.Prices[model]
	return p, ok
}
