package match

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultEmbeddingThreshold is the minimum cosine similarity of the
// embedding matcher, as in the reference implementation.
const DefaultEmbeddingThreshold = 0.70

// EmbeddingOptions configure the embedding matcher.
type EmbeddingOptions struct {
	// URL is the endpoint: a full .../embeddings URL, or a base URL to
	// which /v1/embeddings (or /embeddings after a /v1) is added.
	URL   string
	Model string
	// APIKey, if set, is sent as a bearer token.
	APIKey string
	// CacheDir holds description vectors across restarts; "" disables it.
	CacheDir  string
	BatchSize int
	Timeout   time.Duration
	// Client is the HTTP client; nil means one with Timeout.
	Client *http.Client
}

// Embedding ranks skills by the cosine similarity between the message's
// embedding and each skill description's, from any OpenAI-compatible
// /v1/embeddings endpoint (Ollama, llama.cpp, vLLM, OpenAI). Description
// vectors are cached on disk by model and text, so a restart does not
// embed them again. Negative similarities score 0.
type Embedding struct {
	opts     EmbeddingOptions
	endpoint string
	client   *http.Client

	mu      sync.RWMutex
	vectors [][]float32

	cacheMu sync.Mutex
	cache   map[string][]float32 // text hash -> vector, for opts.Model
	loaded  bool
}

// NewEmbedding returns an embedding matcher.
func NewEmbedding(opts EmbeddingOptions) (*Embedding, error) {
	if opts.URL == "" || opts.Model == "" {
		return nil, errors.New("embedding matcher: match.embedding.url and match.embedding.model are required")
	}
	endpoint, err := endpointURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("embedding matcher: match.embedding.url: %w", err)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 64
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	client := opts.Client
	if client == nil {
		client = &http.Client{Timeout: opts.Timeout}
	}
	return &Embedding{opts: opts, endpoint: endpoint, client: client}, nil
}

func endpointURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	p := strings.TrimSuffix(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/embeddings"):
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path = p
	return u.String(), nil
}

// Index implements Matcher: it embeds every description not in the cache.
func (e *Embedding) Index(ctx context.Context, docs []Doc) error {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Description
	}
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	e.loadCache()
	vectors := make([][]float32, len(texts))
	var missing []int
	for i, t := range texts {
		if v, ok := e.cache[hashText(t)]; ok {
			vectors[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		batch := make([]string, len(missing))
		for k, i := range missing {
			batch[k] = texts[i]
		}
		got, err := e.embed(ctx, batch)
		if err != nil {
			return err
		}
		for k, i := range missing {
			vectors[i] = got[k]
			e.cache[hashText(texts[i])] = got[k]
		}
		if err := e.saveCache(); err != nil {
			return err
		}
	}
	if err := sameDims(vectors); err != nil {
		return fmt.Errorf("embedding matcher: %w", err)
	}
	e.mu.Lock()
	e.vectors = vectors
	e.mu.Unlock()
	return nil
}

// Score implements Matcher.
func (e *Embedding) Score(ctx context.Context, message string) ([]float64, error) {
	e.mu.RLock()
	vectors := e.vectors
	e.mu.RUnlock()
	if len(vectors) == 0 {
		return nil, nil
	}
	q, err := e.embed(ctx, []string{message})
	if err != nil {
		return nil, err
	}
	if len(q[0]) != len(vectors[0]) {
		return nil, fmt.Errorf("embedding matcher: the message vector has %d dimensions, the descriptions %d", len(q[0]), len(vectors[0]))
	}
	scores := make([]float64, len(vectors))
	for i, v := range vectors {
		scores[i] = max(0, cosine(q[0], v))
	}
	return scores, nil
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// embed sends texts in batches and returns their vectors in order.
func (e *Embedding) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		batch := texts[start:min(start+e.opts.BatchSize, len(texts))]
		vs, err := e.post(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *Embedding) post(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: e.opts.Model, Input: batch})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embedding endpoint %s is unreachable: %w", e.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("embedding endpoint %s: read response: %w", e.endpoint, err)
	}
	var r embedResponse
	jsonErr := json.Unmarshal(data, &r)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		if jsonErr == nil && r.Error != nil {
			msg = r.Error.Message
		}
		return nil, fmt.Errorf("embedding endpoint %s answered %s: %.300s", e.endpoint, resp.Status, msg)
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("embedding endpoint %s: bad response: %w", e.endpoint, jsonErr)
	}
	if len(r.Data) != len(batch) {
		return nil, fmt.Errorf("embedding endpoint %s returned %d vectors for %d inputs", e.endpoint, len(r.Data), len(batch))
	}
	out := make([][]float32, len(batch))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(batch) || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding endpoint %s returned a bad or repeated index %d", e.endpoint, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding endpoint %s returned an empty vector", e.endpoint)
		}
		out[d.Index] = d.Embedding
	}
	if err := sameDims(out); err != nil {
		return nil, fmt.Errorf("embedding endpoint %s: %w", e.endpoint, err)
	}
	return out, nil
}

func sameDims(vs [][]float32) error {
	for _, v := range vs {
		if len(v) != len(vs[0]) {
			return fmt.Errorf("vectors have different dimensions (%d and %d); was the model changed?", len(vs[0]), len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return errors.New("a vector holds NaN or infinity")
			}
		}
	}
	return nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func hashText(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// cacheFile is one JSON file per model: {"model": ..., "vectors": {hash: [...]}}.
type cacheFile struct {
	Model   string               `json:"model"`
	Vectors map[string][]float32 `json:"vectors"`
}

func (e *Embedding) cachePath() string {
	h := sha256.Sum256([]byte(e.opts.Model))
	return filepath.Join(e.opts.CacheDir, "embeddings-"+hex.EncodeToString(h[:8])+".json")
}

// loadCache reads the cache once; an unreadable cache is ignored (it is
// only a cache).
func (e *Embedding) loadCache() {
	if e.loaded {
		return
	}
	e.loaded = true
	e.cache = map[string][]float32{}
	if e.opts.CacheDir == "" {
		return
	}
	data, err := os.ReadFile(e.cachePath())
	if err != nil {
		return
	}
	var f cacheFile
	if json.Unmarshal(data, &f) == nil && f.Model == e.opts.Model {
		e.cache = f.Vectors
		if e.cache == nil {
			e.cache = map[string][]float32{}
		}
	}
}

func (e *Embedding) saveCache() error {
	if e.opts.CacheDir == "" {
		return nil
	}
	data, err := json.Marshal(cacheFile{Model: e.opts.Model, Vectors: e.cache})
	if err != nil {
		return err
	}
	if err := writeCacheFile(e.cachePath(), data); err != nil {
		return fmt.Errorf("embedding cache: %w", err)
	}
	return nil
}
