package match

import (
	"context"
	"errors"
)

// Hybrid averages a lexical and an embedding matcher's scores. When the
// embedding endpoint fails, it scores with the lexical matcher alone and
// reports the failure through Err.
type Hybrid struct {
	Lexical   Matcher
	Embedding Matcher
	// Weight of the lexical score, in [0, 1]; the embedding gets the rest.
	Weight float64
	// Warn, if set, hears about embedding failures that were absorbed.
	Warn func(error)
}

// DefaultHybridThreshold is the hybrid matcher's default minimum score.
const DefaultHybridThreshold = (DefaultLexicalThreshold + DefaultEmbeddingThreshold) / 2

// Index implements Matcher.
func (h *Hybrid) Index(ctx context.Context, docs []Doc) error {
	if err := h.Lexical.Index(ctx, docs); err != nil {
		return err
	}
	if err := h.Embedding.Index(ctx, docs); err != nil && h.Warn != nil {
		h.Warn(err)
	}
	return nil
}

// Score implements Matcher.
func (h *Hybrid) Score(ctx context.Context, message string) ([]float64, error) {
	lex, err := h.Lexical.Score(ctx, message)
	if err != nil {
		return nil, err
	}
	emb, err := h.Embedding.Score(ctx, message)
	if err == nil && len(emb) != len(lex) {
		err = errors.New("the embedding index is not ready")
	}
	if err != nil {
		if h.Warn != nil {
			h.Warn(err)
		}
		return lex, nil
	}
	out := make([]float64, len(lex))
	for i := range lex {
		out[i] = h.Weight*lex[i] + (1-h.Weight)*emb[i]
	}
	return out, nil
}
