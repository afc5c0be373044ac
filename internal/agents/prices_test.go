package agents_test

import (
	"strings"
	"testing"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/agents"
)

// Prices load with cached defaulting to input; a price without input or output, negative, or of
// the wrong type is an error naming its line and key; a model without a price has none.
func TestPrices(t *testing.T) {
	base := "providers:\n  p: {kind: scripted}\nagents:\n  default: {provider: p, model: m1}\n"
	set, err := agents.Parse("agents.yaml", []byte(base+"prices:\n  m1: {input: 0.15, output: 0.6}\n  m2: {input: 3, output: 15, cached: 0.3}\n"), agents.Options{Builtin: builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := set.Price("m1"); !ok || p != (carryon.Price{Input: 0.15, Output: 0.6, Cached: 0.15}) {
		t.Fatalf("m1 = %+v, %v", p, ok)
	}
	if p, _ := set.Price("m2"); p.Cached != 0.3 {
		t.Fatalf("m2 = %+v", p)
	}
	if _, ok := set.Price("m3"); ok {
		t.Fatal("m3 has a price")
	}
	// 1,000 input tokens (100 of them cached) and 500 output tokens of m2: 900*3 + 100*0.3 + 500*15
	// USD per million, 10,230 micro-dollars.
	if got := (carryon.Price{Input: 3, Output: 15, Cached: 0.3}).Cost(1000, 500, 100); got != 10_230_000 {
		t.Fatalf("cost = %d nano-dollars, want 10230000", got)
	}
	for _, c := range []struct{ prices, want string }{
		{"  m1: {input: 1}\n", "agents.yaml:6: prices.m1: needs input and output"},
		{"  m1: {input: -1, output: 2}\n", "agents.yaml:6: prices.m1.input: must be a number from 0"},
		{"  m1: {input: 1, output: 2, cached: -0.5}\n", "prices.m1.cached: must be a number from 0"},
		{"  m1: {input: cheap, output: 2}\n", "prices.m1.input"},
		{"  m1: {input: 1, output: 2, extra: 3}\n", "extra"},
	} {
		_, err := agents.Parse("agents.yaml", []byte(base+"prices:\n"+c.prices), agents.Options{Builtin: builtin()})
		if carryon.ErrorCode(err) != carryon.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prices %q: error %v, want one containing %q", c.prices, err, c.want)
		}
	}
}
