// Package openai is the model.Provider for the OpenAI Chat Completions API and every endpoint that
// speaks it (OpenAI, vLLM, Ollama, llama.cpp, …), built on github.com/openai/openai-go/v3.
//
// It owns the translation between carryon's model types and that wire format: requests out,
// streamed chunks (text deltas, tool-call fragments, usage) back, SDK errors into *model.Error.
// It must not retry (the SDK's own retries are off; model.WithRetry decides) and must not know
// about sessions, runs or storage.
package openai

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/carryon-hub/carryon/internal/model"
)

// Name is the provider's name in errors and logs.
const Name = "openai"

// defaultBaseURL is OpenAI's own endpoint, used when Config.BaseURL is empty.
const defaultBaseURL = "https://api.openai.com/v1/"

// Config configures a Provider.
type Config struct {
	// APIKey is sent as a bearer token; it may be empty for local servers that need none.
	APIKey string
	// BaseURL is the endpoint, e.g. "http://localhost:11434/v1" for Ollama; empty means OpenAI.
	BaseURL string
	// Model is the model to call when a Request names none.
	Model string
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
}

// Provider calls a Chat Completions endpoint. It is safe for concurrent use.
type Provider struct {
	client openai.Client
	model  string
	// official is true for OpenAI's own endpoint, which wants max_completion_tokens; other
	// servers get the older, more widely understood max_tokens.
	official bool
}

// New returns a Provider for cfg. It does not read the process environment for the key or the
// endpoint (FromEnv does), and it turns the SDK's retries off: retries belong to model.WithRetry.
func New(cfg Config) *Provider {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	official := false
	if u, err := url.Parse(base); err == nil && strings.EqualFold(u.Hostname(), "api.openai.com") {
		official = true
	}
	return &Provider{client: openai.NewClient(opts...), model: cfg.Model, official: official}
}

// FromEnv returns a Provider configured from OPENAI_API_KEY and OPENAI_BASE_URL, read through
// getenv, calling model by default. The key may be empty only when a base URL is set (a local
// server that needs no key).
func FromEnv(getenv func(string) string, model string) (*Provider, error) {
	key, base := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	if key == "" && base == "" {
		return nil, errors.New("openai: OPENAI_API_KEY is not set (it may be empty only when OPENAI_BASE_URL points at a local server)")
	}
	return New(Config{APIKey: key, BaseURL: base, Model: model}), nil
}

// Name returns "openai".
func (p *Provider) Name() string { return Name }

// Stream sends req as a streaming chat completion and yields its text deltas as they arrive,
// then one final chunk with the tool calls assembled from their fragments, the usage and the
// finish reason. Errors are *model.Error.
func (p *Provider) Stream(ctx context.Context, req model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		params, err := p.params(req)
		if err != nil {
			yield(model.Chunk{}, &model.Error{Provider: Name, Message: err.Error(), Err: err})
			return
		}
		stream := p.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		model.Progress(ctx, 0) // the headers came (or the request failed)

		var st streamState
		for stream.Next() {
			model.Progress(ctx, outputBytes(stream.Current()))
			for _, delta := range st.add(stream.Current()) {
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
