package agents

import (
	"math"
	"time"

	"github.com/carryon-hub/carryon"
	"github.com/carryon-hub/carryon/internal/longterm"
	"github.com/carryon-hub/carryon/internal/model"
	"github.com/carryon-hub/carryon/internal/model/openai"
)

// Embeddings is the file's `embeddings` key, resolved: the provider that makes the vectors of
// long-term memory, for semantic recall. Without it memory is searched by shared words only.
type Embeddings struct {
	// Provider names an openai provider of the file (any endpoint that serves /v1/embeddings).
	Provider   string
	Model      string
	Dimensions int
	BatchSize  int
	Timeout    time.Duration
	// ConsolidateAbove is the similarity above which an added fact updates its near duplicate.
	ConsolidateAbove float64
	MaxInputBytes    int
	// CacheMB bounds the vectors an instance keeps in memory for search.
	CacheMB int
}

type rawEmbeddings struct {
	Provider         string   `yaml:"provider"`
	Model            string   `yaml:"model"`
	Dimensions       *int     `yaml:"dimensions"`
	BatchSize        *int     `yaml:"batch_size"`
	Timeout          *string  `yaml:"timeout"`
	ConsolidateAbove *float64 `yaml:"consolidate_above"`
	MaxInputBytes    *int     `yaml:"max_input_bytes"`
	CacheMB          *int     `yaml:"cache_mb"`
}

// embeddings resolves the file's embeddings key (nil when there is none).
func (v *validator) embeddings(r *rawEmbeddings, set *Set) *Embeddings {
	if r == nil {
		return nil
	}
	const at = "embeddings"
	e := &Embeddings{Provider: r.Provider, Model: r.Model}
	if p, ok := set.Providers[r.Provider]; !ok {
		v.fail(at+".provider", "must name a provider of the file (of kind openai: any endpoint serving /v1/embeddings), not %q", r.Provider)
	} else if p.Kind != KindOpenAI {
		v.fail(at+".provider", "names %s, of kind %s; embeddings need a provider of kind openai (OpenAI, Ollama, vLLM, LiteLLM and others serve its /v1/embeddings)", r.Provider, p.Kind)
	}
	if r.Model == "" {
		v.fail(at+".model", "is required: the embedding model, such as text-embedding-3-small or nomic-embed-text")
	}
	intIn := func(key string, p *int, lo, hi int) int {
		if p == nil {
			return 0
		}
		if *p < lo || *p > hi {
			v.fail(at+"."+key, "must be from %d to %d, not %d", lo, hi, *p)
			return 0
		}
		return *p
	}
	e.Dimensions = intIn("dimensions", r.Dimensions, 1, 16384)
	e.BatchSize = intIn("batch_size", r.BatchSize, 1, 2048)
	e.MaxInputBytes = intIn("max_input_bytes", r.MaxInputBytes, 1, carryon.MaxLongTermTextBytes)
	e.CacheMB = intIn("cache_mb", r.CacheMB, 1, 1<<20)
	if r.Timeout != nil {
		e.Timeout = v.duration(at+".timeout", *r.Timeout, time.Millisecond)
	}
	if c := r.ConsolidateAbove; c != nil {
		if math.IsNaN(*c) || *c <= 0 || *c > 1 {
			v.fail(at+".consolidate_above", "must be a similarity above 0 and at most 1, such as 0.9, not %v", *c)
		} else {
			e.ConsolidateAbove = *c
		}
	}
	return e
}

// OpenEmbedder returns the embeddings client of the set's embeddings provider, as it is: neither
// retried nor instrumented (nil when the set has no embeddings).
func (s *Set) OpenEmbedder() model.Embedder {
	if s.Embeddings == nil {
		return nil
	}
	p := s.Providers[s.Embeddings.Provider]
	return openai.New(openai.Config{APIKey: p.apiKey, BaseURL: p.BaseURL})
}

// Memory is the public view of how the server's long-term memory is searched.
func (s *Set) Memory() *carryon.AgentMemory {
	e := s.Embeddings
	if e == nil {
		return &carryon.AgentMemory{Search: carryon.SearchKeyword}
	}
	return &carryon.AgentMemory{Search: carryon.SearchHybrid, Embeddings: &carryon.AgentEmbeddings{
		Provider: e.Provider, Model: e.Model, Dimensions: e.Dimensions, ConsolidateAbove: e.ConsolidateAbove}}
}

// Extraction is a profile's `memory_extraction`: facts learned from its sessions, by its own
// model, written to Namespace of the owner's long-term memory.
type Extraction struct {
	Namespace string
	Timeout   time.Duration
	// IdleAfter is how long a session must have been idle before its new turns are learned from
	// on their own (DefaultIdleAfter; 0: only when asked, POST /v1/sessions/{id}/extract).
	IdleAfter time.Duration
}

// DefaultIdleAfter is memory_extraction's idle_after when the file gives none.
const DefaultIdleAfter = 10 * time.Minute

type rawExtraction struct {
	Namespace string  `yaml:"namespace"`
	Timeout   *string `yaml:"timeout"`
	IdleAfter *string `yaml:"idle_after"`
}

// extraction resolves a profile's memory_extraction (nil when it has none).
func (v *validator) extraction(at string, r *rawExtraction) *Extraction {
	if r == nil {
		return nil
	}
	e := &Extraction{Namespace: r.Namespace}
	if e.Namespace == "" {
		e.Namespace = longterm.FactsNamespace
	} else if err := longterm.ValidNamespace(e.Namespace, false); err != nil {
		v.fail(at+".namespace", "%s", carryon.ErrorMessage(err))
	}
	if r.Timeout != nil {
		e.Timeout = v.duration(at+".timeout", *r.Timeout, time.Second)
	}
	e.IdleAfter = DefaultIdleAfter
	if r.IdleAfter != nil {
		e.IdleAfter = v.duration(at+".idle_after", *r.IdleAfter, 0)
	}
	return e
}
