package openai_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/embedtest"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// TestEmbed: the provider sends the inputs as the OpenAI wire format says and returns the
// server's vectors in order, with the usage; a reply of the wrong size and a server error are
// *model.Error, the second retryable.
func TestEmbed(t *testing.T) {
	srv := embedtest.New(t, 8)
	p := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k"})
	resp, err := p.Embed(t.Context(), model.EmbedRequest{Model: "m1", Inputs: []string{"likes sushi", "the sky"}, Dimensions: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Vectors) != 2 || !slices.Equal(resp.Vectors[0], srv.Vector("likes sushi")) || !slices.Equal(resp.Vectors[1], srv.Vector("the sky")) {
		t.Fatalf("vectors = %v", resp.Vectors)
	}
	if resp.Model != "m1" || resp.InputTokens != 4 {
		t.Fatalf("model %q, tokens %d", resp.Model, resp.InputTokens)
	}
	if got := srv.Requests(); len(got) != 1 || !slices.Equal(got[0], []string{"likes sushi", "the sky"}) {
		t.Fatalf("requests = %v", got)
	}

	srv.WrongDimensions(true)
	_, err = p.Embed(t.Context(), model.EmbedRequest{Model: "m1", Inputs: []string{"a"}, Dimensions: 8})
	if e, ok := model.AsError(err); !ok || e.Retryable {
		t.Fatalf("wrong dimensions: %v", err)
	}
	srv.WrongDimensions(false)

	srv.Status(http.StatusServiceUnavailable)
	_, err = p.Embed(t.Context(), model.EmbedRequest{Model: "m1", Inputs: []string{"a"}})
	if !model.IsRetryable(err) {
		t.Fatalf("503: %v, want a retryable error", err)
	}
	srv.Status(0)

	// WithEmbedRetry rides over two failures.
	srv.FailNext(2)
	r := model.WithEmbedRetry(p, model.RetryPolicy{BaseDelay: 1, MaxDelay: 1})
	if _, err := r.Embed(t.Context(), model.EmbedRequest{Model: "m1", Inputs: []string{"a"}}); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Fatalf("%d requests, want 6", n)
	}
}
