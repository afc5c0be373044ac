package model

import (
	"context"
	"fmt"
)

// Embedder turns texts into vectors: an embeddings endpoint (model/openai speaks the OpenAI
// /v1/embeddings wire format that Ollama, vLLM, LiteLLM and others serve). Like a Provider it
// reports failures as *Error and never retries on its own (WithEmbedRetry does).
type Embedder interface {
	// Name is the provider's name in errors, logs and telemetry.
	Name() string
	// Embed returns one vector per input, in the order of the inputs, each of req.Dimensions
	// values when that is set. A reply with another count or size is an *Error.
	Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error)
}

// EmbedRequest is one embeddings call.
type EmbedRequest struct {
	// Model names the embedding model.
	Model string
	// Inputs are the texts, one vector each.
	Inputs []string
	// Dimensions asks for vectors of that size (models that can shorten them); 0 takes the
	// model's own size.
	Dimensions int
}

// EmbedResponse is the answer of an embeddings call.
type EmbedResponse struct {
	// Vectors are one per input, in order.
	Vectors [][]float32
	// Model is the model that answered, as the server names it.
	Model string
	// InputTokens are the tokens the server counted.
	InputTokens int
}

// CheckVectors reports as an *Error of provider a reply that does not hold one vector of dims
// values (any size when dims is 0, but the same for every vector) per input.
func CheckVectors(provider string, vectors [][]float32, inputs, dims int) error {
	if len(vectors) != inputs {
		return &Error{Provider: provider, Message: fmt.Sprintf("the embeddings reply holds %d vectors for %d inputs", len(vectors), inputs)}
	}
	for i, v := range vectors {
		want := dims
		if want == 0 {
			want = len(vectors[0])
		}
		if len(v) != want || len(v) == 0 {
			return &Error{Provider: provider, Message: fmt.Sprintf("the embeddings reply's vector %d has %d dimensions, not %d (embeddings.dimensions in the agents file)", i, len(v), want)}
		}
	}
	return nil
}

// WithEmbedRetry returns an Embedder that retries e's failed calls under policy, as WithRetry
// does a model call's: only retryable errors, the server's Retry-After when it gave one (up to
// MaxDelay), else exponential backoff with jitter; a cancelled context ends the wait at once.
func WithEmbedRetry(e Embedder, policy RetryPolicy) Embedder {
	return &retryingEmbedder{e: e, policy: policy.withDefaults()}
}

type retryingEmbedder struct {
	e      Embedder
	policy RetryPolicy
}

// Name returns the wrapped embedder's name.
func (r *retryingEmbedder) Name() string { return r.e.Name() }

// Embed runs attempts until one succeeds, the error is not retryable, the attempts run out or
// ctx is done.
func (r *retryingEmbedder) Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error) {
	for attempt := 1; ; attempt++ {
		resp, err := r.e.Embed(ctx, req)
		if err == nil || attempt >= r.policy.MaxAttempts || !IsRetryable(err) || ctx.Err() != nil {
			return resp, err
		}
		wait := r.policy.backoff(attempt)
		if e, ok := AsError(err); ok && e.RetryAfter > 0 {
			if e.RetryAfter > r.policy.MaxDelay {
				return resp, err
			}
			wait = e.RetryAfter
		}
		if r.policy.OnRetry != nil {
			r.policy.OnRetry(attempt, err, wait)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return EmbedResponse{}, &Error{Provider: r.e.Name(), Message: fmt.Sprintf("retry abandoned: %v (last attempt: %v)", serr, err), Err: serr}
		}
	}
}
