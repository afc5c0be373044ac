package agents

import "math"

// rawCompaction is an agent's `compaction` key: the automatic compaction's threshold, in tokens
// or as a share of the profile's context_budget (one of the two).
type rawCompaction struct {
	ThresholdTokens *int     `yaml:"threshold_tokens"`
	Threshold       *float64 `yaml:"threshold"`
}

// compaction resolves the agent's automatic compaction threshold in tokens (0: off): threshold_tokens
// from 1 to the context budget, or threshold, a share of the budget above 0 and at most 1.
func (v *validator) compaction(at string, r *rawCompaction, budget int) int {
	if r == nil {
		return 0
	}
	switch {
	case r.ThresholdTokens != nil && r.Threshold != nil:
		v.fail(at, "takes threshold_tokens (a number of tokens) or threshold (a share of context_budget), not both")
	case r.ThresholdTokens != nil:
		if n := *r.ThresholdTokens; n < 1 || n > budget {
			v.fail(at+".threshold_tokens", "must be from 1 to the agent's context_budget (%d), not %d", budget, n)
		} else {
			return n
		}
	case r.Threshold != nil:
		if f := *r.Threshold; math.IsNaN(f) || f <= 0 || f > 1 {
			v.fail(at+".threshold", "must be a share of context_budget above 0 and at most 1, such as 0.8, not %v", f)
		} else {
			return max(int(f*float64(budget)), 1)
		}
	default:
		v.fail(at, "needs threshold_tokens (a number of tokens) or threshold (a share of context_budget, such as 0.8)")
	}
	return 0
}
