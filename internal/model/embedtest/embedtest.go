// Package embedtest is a fake embeddings server for tests: an HTTP server that speaks the OpenAI
// /v1/embeddings wire format (what model/openai sends and parses) and answers scripted vectors,
// so that a test knows exactly which items are near which, and can make the server fail, stall
// or answer vectors of the wrong size.
package embedtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// Server is a fake embeddings endpoint. Its zero value is not usable; call New.
type Server struct {
	// URL is the base URL to configure (ending in /v1).
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	dims     int
	vectors  map[string][]float32
	concepts map[string]int
	nconcept int
	fail     int // answer 503 to this many more requests
	status   int // answer this status to every request (0: none)
	wrongDim bool
	stall    chan struct{}
	requests [][]string
}

// New starts a server answering vectors of dims values, closed when the test ends.
func New(t testing.TB, dims int) *Server {
	s := &Server{dims: dims, vectors: map[string][]float32{}, concepts: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(func() {
		s.Release()
		s.srv.Close()
	})
	return s
}

// Set makes text embed to exactly v (it is normalised on the way out, as real models do).
func (s *Server) Set(text string, v []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vectors[text] = v
}

// Concept makes every word in words count as the same dimension (synonyms), so that texts that
// share none of their words can still be near: Concept("food", "sushi", "eat", "likes").
func (s *Server) Concept(words ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dims - 1 - s.nconcept%s.dims // from the top down, away from most hashed words
	s.nconcept++
	for _, w := range words {
		s.concepts[w] = d
	}
}

// FailNext makes the next n requests answer 503.
func (s *Server) FailNext(n int) { s.mu.Lock(); s.fail = n; s.mu.Unlock() }

// Status makes every request answer status (0 ends it).
func (s *Server) Status(status int) { s.mu.Lock(); s.status = status; s.mu.Unlock() }

// WrongDimensions makes the server answer vectors one value short.
func (s *Server) WrongDimensions(on bool) { s.mu.Lock(); s.wrongDim = on; s.mu.Unlock() }

// Stall makes every request wait until Release (or until the client gives up).
func (s *Server) Stall() { s.mu.Lock(); s.stall = make(chan struct{}); s.mu.Unlock() }

// Release ends a Stall.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stall != nil {
		close(s.stall)
		s.stall = nil
	}
}

// Requests returns the inputs of every request answered so far, in order.
func (s *Server) Requests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.requests...)
}

// Vector returns the vector the server answers for text: a scripted one, else a bag of words
// hashed into the dimensions (a word's concept dimension when it has one), normalised.
func (s *Server) Vector(text string) []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vector(text)
}

func (s *Server) vector(text string) []float32 {
	v := make([]float32, s.dims)
	if sv, ok := s.vectors[text]; ok {
		copy(v, sv)
	} else {
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			d, ok := s.concepts[w]
			if !ok {
				h := fnv.New32a()
				h.Write([]byte(w))
				d = int(h.Sum32() % uint32(s.dims))
			}
			v[d]++
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(n))
		}
	}
	return v
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var inputs []string
	if json.Unmarshal(req.Input, &inputs) != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			apiError(w, http.StatusBadRequest, "invalid_request_error", "input must be a string or an array of strings")
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	stall, status := s.stall, s.status
	if s.fail > 0 {
		s.fail--
		status = http.StatusServiceUnavailable
	}
	s.requests = append(s.requests, inputs)
	s.mu.Unlock()
	if stall != nil {
		select {
		case <-stall:
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		apiError(w, status, "server_error", "the fake embeddings server was told to fail")
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}{Object: "list", Model: req.Model, Data: []item{}}
	s.mu.Lock()
	for i, in := range inputs {
		v := s.vector(in)
		if s.wrongDim {
			v = v[:len(v)-1]
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: v})
		out.Usage.PromptTokens += len(strings.Fields(in))
	}
	s.mu.Unlock()
	out.Usage.TotalTokens = out.Usage.PromptTokens
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}
