package match

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skillhost/skillhost/internal/matchtext"
)

// fakeEmbeddings implements the /v1/embeddings wire format. Each text gets a
// deterministic vector from its words, so texts sharing words are similar.
type fakeEmbeddings struct {
	dims     int
	requests atomic.Int32
	inputs   atomic.Int32
	mu       sync.Mutex
	batches  []int
	auth     string
	// fail, if set, answers every request with this status.
	fail int
	// mutate, if set, edits the response before it is sent.
	mutate func(resp map[string]any)
}

func (f *fakeEmbeddings) vector(text string) []float64 {
	v := make([]float64, f.dims)
	for _, w := range matchtext.Tokens(text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(f.dims)] += 1
	}
	return v
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, `{"error":{"message":"bad request shape"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.auth = r.Header.Get("Authorization")
	f.mu.Unlock()
	if f.fail != 0 {
		w.WriteHeader(f.fail)
		w.Write([]byte(`{"error":{"message":"model not loaded"}}`))
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.inputs.Add(int32(len(req.Input)))
	f.mu.Lock()
	f.batches = append(f.batches, len(req.Input))
	f.mu.Unlock()
	var data []map[string]any
	for i, in := range req.Input {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": f.vector(in)})
	}
	resp := map[string]any{"object": "list", "data": data, "model": req.Model}
	if f.mutate != nil {
		f.mutate(resp)
	}
	json.NewEncoder(w).Encode(resp)
}

var embedDocs = []Doc{
	{Name: "pdf", Description: "merge split extract pdf pages"},
	{Name: "csv", Description: "summarize csv columns rows statistics"},
	{Name: "git", Description: "git log blame history commits"},
	{Name: "img", Description: "resize crop images photos"},
	{Name: "sql", Description: "sql database queries joins"},
}

func newEmbedding(t *testing.T, url string, mod func(*EmbeddingOptions)) *Embedding {
	t.Helper()
	opts := EmbeddingOptions{URL: url, Model: "test-model", CacheDir: t.TempDir(), BatchSize: 2, APIKey: "sk-test"}
	if mod != nil {
		mod(&opts)
	}
	e, err := NewEmbedding(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEmbeddingWireFormatAndBatching(t *testing.T) {
	f := &fakeEmbeddings{dims: 64}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEmbedding(t, srv.URL, nil)
	if err := e.Index(context.Background(), embedDocs); err != nil {
		t.Fatal(err)
	}
	if got := f.batches; len(got) != 3 || got[0] != 2 || got[1] != 2 || got[2] != 1 {
		t.Errorf("5 descriptions in batches of 2 went as %v", got)
	}
	if f.auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q", f.auth)
	}
	scores, err := e.Score(context.Background(), "merge these pdf pages")
	if err != nil {
		t.Fatal(err)
	}
	best := 0
	for i, s := range scores {
		if s < 0 || s > 1 {
			t.Errorf("score %v outside [0, 1]", s)
		}
		if s > scores[best] {
			best = i
		}
	}
	if embedDocs[best].Name != "pdf" || scores[best] < 0.5 {
		t.Errorf("scores %v", scores)
	}
}

func TestEmbeddingCacheSurvivesRestart(t *testing.T) {
	f := &fakeEmbeddings{dims: 32}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cache := t.TempDir()
	first := newEmbedding(t, srv.URL, func(o *EmbeddingOptions) { o.CacheDir = cache })
	if err := first.Index(context.Background(), embedDocs); err != nil {
		t.Fatal(err)
	}
	before := f.inputs.Load()
	restarted := newEmbedding(t, srv.URL, func(o *EmbeddingOptions) { o.CacheDir = cache })
	if err := restarted.Index(context.Background(), embedDocs); err != nil {
		t.Fatal(err)
	}
	if after := f.inputs.Load(); after != before {
		t.Errorf("a restart embedded %d descriptions again", after-before)
	}
	changed := append(append([]Doc{}, embedDocs...), Doc{Name: "new", Description: "a brand new description"})
	if err := restarted.Index(context.Background(), changed); err != nil {
		t.Fatal(err)
	}
	if got := f.inputs.Load() - before; got != 1 {
		t.Errorf("only the new description must be embedded, got %d", got)
	}
	other := newEmbedding(t, srv.URL, func(o *EmbeddingOptions) { o.CacheDir = cache; o.Model = "other-model" })
	before = f.inputs.Load()
	other.Index(context.Background(), embedDocs)
	if f.inputs.Load()-before != int32(len(embedDocs)) {
		t.Error("vectors of another model were reused")
	}
}

func TestEmbeddingErrors(t *testing.T) {
	tests := []struct {
		name   string
		fake   *fakeEmbeddings
		url    string
		want   string
		atRank bool
	}{
		{name: "unreachable", url: "http://127.0.0.1:1", want: "unreachable"},
		{name: "bad status", fake: &fakeEmbeddings{dims: 8, fail: http.StatusServiceUnavailable}, want: "503 Service Unavailable: model not loaded"},
		{name: "wrong count", fake: &fakeEmbeddings{dims: 8, mutate: func(r map[string]any) { r["data"] = r["data"].([]map[string]any)[:1] }}, want: "returned 1 vectors for 2 inputs"},
		{name: "mixed dimensions", fake: &fakeEmbeddings{dims: 8, mutate: func(r map[string]any) {
			d := r["data"].([]map[string]any)
			if len(d) > 1 {
				d[1]["embedding"] = []float64{1, 2}
			}
		}}, want: "different dimensions"},
		{name: "repeated index", fake: &fakeEmbeddings{dims: 8, mutate: func(r map[string]any) {
			d := r["data"].([]map[string]any)
			if len(d) > 1 {
				d[1]["index"] = 0
			}
		}}, want: "bad or repeated index"},
		{name: "not json", fake: &fakeEmbeddings{dims: 8, mutate: func(r map[string]any) { r["data"] = "nope" }}, want: "bad response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if tt.fake != nil {
				srv := httptest.NewServer(tt.fake)
				defer srv.Close()
				url = srv.URL
			}
			e := newEmbedding(t, url, nil)
			err := e.Index(context.Background(), embedDocs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEmbeddingQueryDimensionMismatch(t *testing.T) {
	f := &fakeEmbeddings{dims: 16}
	srv := httptest.NewServer(f)
	defer srv.Close()
	e := newEmbedding(t, srv.URL, nil)
	if err := e.Index(context.Background(), embedDocs); err != nil {
		t.Fatal(err)
	}
	f.dims = 8 // the server switched models
	if _, err := e.Score(context.Background(), "pdf"); err == nil || !strings.Contains(err.Error(), "16") {
		t.Fatalf("err = %v", err)
	}
}

func TestEndpointURL(t *testing.T) {
	tests := map[string]string{
		"http://localhost:11434":           "http://localhost:11434/v1/embeddings",
		"http://localhost:11434/v1":        "http://localhost:11434/v1/embeddings",
		"https://api.openai.com/v1/":       "https://api.openai.com/v1/embeddings",
		"http://h:8080/custom/embeddings":  "http://h:8080/custom/embeddings",
		"http://h/openai/deployments/x/v1": "http://h/openai/deployments/x/v1/embeddings",
	}
	for in, want := range tests {
		if got, err := endpointURL(in); err != nil || got != want {
			t.Errorf("endpointURL(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := endpointURL("localhost:1234"); err == nil {
		t.Error("a URL without a scheme must be refused")
	}
}

func TestHybridFallsBackToLexical(t *testing.T) {
	f := &fakeEmbeddings{dims: 8, fail: http.StatusInternalServerError}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var warned []error
	h := &Hybrid{Lexical: NewLexical(LexicalOptions{}), Embedding: newEmbedding(t, srv.URL, nil), Weight: 0.5,
		Warn: func(err error) { warned = append(warned, err) }}
	if err := h.Index(context.Background(), embedDocs); err != nil {
		t.Fatal(err)
	}
	scores, err := h.Score(context.Background(), "merge pdf pages")
	if err != nil || len(scores) != len(embedDocs) || scores[0] <= scores[1] {
		t.Fatalf("scores %v, %v", scores, err)
	}
	if len(warned) == 0 {
		t.Error("the embedding failure was not reported")
	}
	f.fail = 0
	h2 := &Hybrid{Lexical: NewLexical(LexicalOptions{}), Embedding: newEmbedding(t, srv.URL, nil), Weight: 0.5}
	h2.Index(context.Background(), embedDocs)
	mixed, _ := h2.Score(context.Background(), "merge pdf pages")
	lex, _ := h2.Lexical.Score(context.Background(), "merge pdf pages")
	emb, _ := h2.Embedding.Score(context.Background(), "merge pdf pages")
	if math.Abs(mixed[0]-(lex[0]+emb[0])/2) > 1e-9 {
		t.Errorf("hybrid %v is not the mean of %v and %v", mixed[0], lex[0], emb[0])
	}
}
