package agents

import (
	"time"

	"github.com/carryon-hub/carryon/internal/model"
)

// The defaults of a profile's model limits (docs/AGENTS.md, "Model limits", says why these).
const (
	// DefaultModelFirstByteTimeout is the longest wait for a model's response headers. The
	// hosted APIs send them within a few seconds.
	DefaultModelFirstByteTimeout = 60 * time.Second
	// DefaultModelIdleTimeout is the longest silence inside a model's answer. A model that writes
	// sends something every fraction of a second.
	DefaultModelIdleTimeout = 60 * time.Second
	// DefaultModelTimeout is the longest one model call may take: what the OpenAI and Anthropic
	// SDKs allow a request by default.
	DefaultModelTimeout = 10 * time.Minute
	// DefaultModelMaxOutputBytes bounds what a model writes in one call: 1 MiB, about 250,000
	// tokens of text, beyond what the default models can write in one answer.
	DefaultModelMaxOutputBytes = 1 << 20
)

// DefaultModelLimits returns the model limits of a profile that sets none.
func DefaultModelLimits() model.Limits {
	return model.Limits{FirstByte: DefaultModelFirstByteTimeout, Idle: DefaultModelIdleTimeout,
		Total: DefaultModelTimeout, MaxOutputBytes: DefaultModelMaxOutputBytes}
}

// withDefaults returns l with its zero (or negative) fields set to the defaults.
func withDefaults(l model.Limits) model.Limits {
	d := DefaultModelLimits()
	if l.FirstByte <= 0 {
		l.FirstByte = d.FirstByte
	}
	if l.Idle <= 0 {
		l.Idle = d.Idle
	}
	if l.Total <= 0 {
		l.Total = d.Total
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = d.MaxOutputBytes
	}
	return l
}

// modelLimits resolves the model limits of the agent at: each bound the file sets (more than 0),
// the default for the others.
func (v *validator) modelLimits(at string, r *rawAgent) model.Limits {
	var l model.Limits
	for _, d := range []struct {
		key string
		in  *string
		out *time.Duration
	}{{"model_first_byte_timeout", r.ModelFirstByteTimeout, &l.FirstByte}, {"model_idle_timeout", r.ModelIdleTimeout, &l.Idle},
		{"model_timeout", r.ModelTimeout, &l.Total}} {
		if d.in != nil {
			*d.out = v.duration(at+"."+d.key, *d.in, time.Nanosecond)
		}
	}
	if n := r.ModelMaxOutputBytes; n != nil {
		if *n < 1 {
			v.fail(at+".model_max_output_bytes", "must be 1 or more, not %d", *n)
		}
		l.MaxOutputBytes = *n
	}
	return withDefaults(l)
}
