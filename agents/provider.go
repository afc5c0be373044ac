package agents

import (
	"github.com/carryon-hub/carryon/model"
	"github.com/carryon-hub/carryon/model/anthropic"
	"github.com/carryon-hub/carryon/model/openai"
	"github.com/carryon-hub/carryon/model/scripted"
)

// Open returns the model provider p describes, with bounded retries for the remote kinds. Each
// request names its model, so one provider serves every profile that uses it.
func (p *Provider) Open() model.Provider {
	switch p.Kind {
	case KindOpenAI:
		return model.WithRetry(openai.New(openai.Config{APIKey: p.apiKey, BaseURL: p.BaseURL}), model.RetryPolicy{})
	case KindAnthropic:
		return model.WithRetry(anthropic.New(anthropic.Config{APIKey: p.apiKey, BaseURL: p.BaseURL}), model.RetryPolicy{})
	}
	return scripted.New(p.Delay)
}
