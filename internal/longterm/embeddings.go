package longterm

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/model"
)

// Defaults of Embeddings.
const (
	DefaultEmbedTimeout       = 10 * time.Second
	DefaultEmbedBatchSize     = 64
	DefaultConsolidateAbove   = 0.9
	DefaultVectorCacheBytes   = 256 << 20
	DefaultEmbedMaxInputBytes = carryon.MaxLongTermTextBytes
)

// Embeddings is how the service makes vectors of items and queries. Without it (the zero
// Service) memory is searched by shared words only.
type Embeddings struct {
	// Embedder calls the provider (with its retries and telemetry).
	Embedder model.Embedder
	// Model names the embedding model; a vector made by another model is stale.
	Model string
	// Dimensions is the size of the vectors (0: the model's own size).
	Dimensions int
	// BatchSize bounds the inputs of one call of the re-embedding job (default 64).
	BatchSize int
	// Timeout bounds one call, retries included (default 10s).
	Timeout time.Duration
	// ConsolidateAbove is the similarity above which an added fact is a near duplicate of an
	// item of the same namespace (default 0.9).
	ConsolidateAbove float64
	// MaxInputBytes bounds the text of an item that is embedded (default the item text limit).
	MaxInputBytes int
	// CacheBytes bounds the vectors the instance keeps in memory for search (default 256 MiB).
	CacheBytes int64
	// Log gets what the service does not answer: a provider failure an item was stored through.
	Log *slog.Logger
}

func (e *Embeddings) withDefaults() *Embeddings {
	c := *e
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultEmbedBatchSize
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultEmbedTimeout
	}
	if c.ConsolidateAbove <= 0 {
		c.ConsolidateAbove = DefaultConsolidateAbove
	}
	if c.MaxInputBytes <= 0 {
		c.MaxInputBytes = DefaultEmbedMaxInputBytes
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = DefaultVectorCacheBytes
	}
	return &c
}

// WithEmbeddings turns semantic recall on with e, and returns s.
func (s *Service) WithEmbeddings(e *Embeddings) *Service {
	if e != nil && e.Embedder != nil {
		s.emb = e.withDefaults()
		s.vectors = newVectorCache(s.emb.CacheBytes)
	}
	return s
}

// embed returns the unit-length vectors of texts, in one call bounded by the timeout.
func (s *Service) embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, s.emb.Timeout)
	defer cancel()
	resp, err := s.emb.Embedder.Embed(ctx, model.EmbedRequest{Model: s.emb.Model, Inputs: texts, Dimensions: s.emb.Dimensions})
	if err == nil {
		err = model.CheckVectors(s.emb.Embedder.Name(), resp.Vectors, len(texts), s.emb.Dimensions)
	}
	if err != nil {
		return nil, err
	}
	for _, v := range resp.Vectors {
		if !normalize(v) {
			return nil, &model.Error{Provider: s.emb.Embedder.Name(), Message: "the embeddings reply holds a zero or non-finite vector"}
		}
	}
	return resp.Vectors, nil
}

// embedItem returns the vector of an item's text, or nil when there is nothing to embed or the
// provider failed (the item is then stored without one, stale, for the re-embedding job). A
// text over the provider's limit is EINVALID.
func (s *Service) embedItem(ctx context.Context, text string) ([]float32, error) {
	if s.emb == nil || text == "" {
		return nil, nil
	}
	if len(text) > s.emb.MaxInputBytes {
		return nil, carryon.Errorf(carryon.EINVALID, "text is longer than the embeddings provider takes (%d bytes, embeddings.max_input_bytes in the agents file)", s.emb.MaxInputBytes)
	}
	v, err := s.embed(ctx, []string{text})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.log().Warn("memory item stored without a vector: the embeddings provider failed; the re-embedding job will make it", "err", err)
		return nil, nil
	}
	return v[0], nil
}

// normalize scales v to unit length in place; false when it cannot (zero, NaN or infinite).
func normalize(v []float32) bool {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return false
	}
	f := 1 / math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) * f)
	}
	return true
}

// semanticError is the error of a semantic search when the query cannot be embedded.
func semanticError(err error) error {
	return carryon.Errorf(carryon.EUNAVAILABLE, "semantic search is unavailable: the embeddings provider failed (%v); retry, or search with mode keyword", err)
}
