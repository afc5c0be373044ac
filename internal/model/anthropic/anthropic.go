// Package anthropic is the model.Provider for Anthropic's Messages API, built on
// github.com/anthropics/anthropic-sdk-go.
//
// It owns the translation between carryon's model types and that wire format: the system prompt
// apart, tool calls as tool_use blocks, tool results as tool_result blocks in user messages, the
// streamed events (text deltas, tool input JSON, usage, stop reason) back into chunks, and SDK
// errors into *model.Error. It must not retry (the SDK's own retries are off; model.WithRetry
// decides) and must not know about sessions, runs or storage.
package anthropic

import (
	"context"
	"errors"
	"iter"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/carryon-hub/carryon/internal/model"
)

// Name is the provider's name in errors and logs.
const Name = "anthropic"

// DefaultMaxTokens is the output limit sent when neither the request nor the config sets one:
// the Messages API requires one.
const DefaultMaxTokens = 4096

// Config configures a Provider.
type Config struct {
	// APIKey authenticates the requests; it may be empty behind a base URL that needs none.
	APIKey string
	// BaseURL is the endpoint; empty means Anthropic's.
	BaseURL string
	// Model is the model to call when a Request names none.
	Model string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// MaxTokens is the output limit when a Request sets none (default DefaultMaxTokens).
	MaxTokens int
}

// Provider calls the Messages API. It is safe for concurrent use.
type Provider struct {
	client    anthropic.Client
	model     string
	maxTokens int
}

// New returns a Provider for cfg. It reads nothing from the process environment or profile files
// (FromEnv reads the environment), and it turns the SDK's retries off: retries belong to
// model.WithRetry.
func New(cfg Config) *Provider {
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0)}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	maxTokens := cfg.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return &Provider{client: anthropic.NewClient(opts...), model: cfg.Model, maxTokens: maxTokens}
}

// FromEnv returns a Provider configured from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, read through
// getenv, calling model by default. The key may be empty only when a base URL is set.
func FromEnv(getenv func(string) string, model string) (*Provider, error) {
	key, base := getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_BASE_URL")
	if key == "" && base == "" {
		return nil, errors.New("anthropic: ANTHROPIC_API_KEY is not set")
	}
	return New(Config{APIKey: key, BaseURL: base, Model: model}), nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

// Stream sends req to the Messages API with streaming on and yields its text deltas as they
// arrive, then one final chunk with the tool calls (their input JSON assembled from its deltas),
// the usage and the stop reason mapped to model's finish reasons. Errors are *model.Error.
func (p *Provider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		params, opts, err := p.params(req)
		if err != nil {
			yield(model.Chunk{}, &model.Error{Provider: Name, Message: err.Error(), Err: err})
			return
		}
		stream := p.client.Messages.NewStreaming(ctx, params, opts...)
		defer stream.Close()
		model.Progress(ctx, 0) // the headers came (or the request failed)

		var st streamState
		for stream.Next() {
			ev := stream.Current()
			delta, err := st.add(ev)
			model.Progress(ctx, len(delta)+len(ev.Delta.PartialJSON))
			if err != nil {
				yield(model.Chunk{}, model.TransportError(ctx, Name, err, st.yielded))
				return
			}
			if delta != "" {
				st.yielded = true
				if !yield(model.Chunk{Delta: delta}, nil) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(model.Chunk{}, mapError(ctx, err, st.yielded))
			return
		}
		final, err := st.final()
		if err != nil {
			yield(model.Chunk{}, model.TransportError(ctx, Name, err, st.yielded))
			return
		}
		yield(final, nil)
	}
}
