package agents

import (
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/anthropic"
	"github.com/carryon-hub/carryon/internal/model/openai"
	"github.com/carryon-hub/carryon/internal/model/scripted"
)

// Open returns the model provider p describes, as it is: neither bounded nor retried (Client
// adds both). Each request names its model, so one provider serves every profile that uses it.
func (p *Provider) Open() model.Provider {
	switch p.Kind {
	case KindOpenAI:
		return openai.New(openai.Config{APIKey: p.apiKey, BaseURL: p.BaseURL})
	case KindAnthropic:
		return anthropic.New(anthropic.Config{APIKey: p.apiKey, BaseURL: p.BaseURL})
	}
	return scripted.New(p.Delay)
}

// Client returns base, what Open returned, as the runs of a profile with the given model limits
// call it: each attempt within the limits and, for the remote kinds, failed attempts retried a
// few times (a timeout among them; an output limit never).
func (p *Provider) Client(base model.Provider, limits model.Limits) model.Provider {
	bounded := model.WithLimits(base, limits)
	if p.Kind == KindScripted {
		return bounded
	}
	return model.WithRetry(bounded, model.RetryPolicy{})
}
