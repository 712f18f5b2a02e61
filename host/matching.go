package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/skill"
)

// Matcher returns the match engine of the configured strategy, built on
// first use.
func (h *Host) Matcher() (*match.Engine, error) {
	h.matchOnce.Do(func() { h.engine, h.engineErr = h.newEngine() })
	return h.engine, h.engineErr
}

func (h *Host) newEngine() (*match.Engine, error) {
	mc := h.Config.Match
	threshold := func(def float64) float64 {
		if mc.Threshold != nil {
			return *mc.Threshold
		}
		return def
	}
	var lo match.LexicalOptions
	lo.Semantic = strength(mc.Semantic)
	lo.Everyday = strength(mc.Everyday)
	lo.Breadth = strength(mc.Breadth)
	lo.Examples = strength(mc.Examples)
	if dir := userCacheDir("breadth"); dir != "" {
		// One-shot commands index on every call; the breadth pass need not
		// be repeated for an unchanged catalog.
		lo.BreadthCache = match.DirBreadthCache(dir)
	}
	if mc.Code != nil {
		lo.Code = *mc.Code
	}
	lexical := match.NewLexical(lo)
	switch mc.Strategy {
	case config.MatchEmbedding, config.MatchHybrid:
		emb, err := h.embedding()
		if err != nil {
			return nil, err
		}
		if mc.Strategy == config.MatchEmbedding {
			return match.NewEngine(h.Catalog, emb, threshold(match.DefaultEmbeddingThreshold), mc.Limit), nil
		}
		hy := &match.Hybrid{Lexical: lexical, Embedding: emb, Weight: 0.5,
			Warn: func(err error) { h.Warn("embedding matcher failed; matching lexically only: %v", err) }}
		return match.NewEngine(h.Catalog, hy, threshold(match.DefaultHybridThreshold), mc.Limit), nil
	}
	return match.NewEngine(h.Catalog, lexical, threshold(match.DefaultLexicalThreshold), mc.Limit), nil
}

func (h *Host) embedding() (*match.Embedding, error) {
	ec := h.Config.Match.Embedding
	var key string
	if ec.APIKeyEnv != "" {
		key = os.Getenv(ec.APIKeyEnv)
		if key == "" {
			h.Warn("match.embedding.api_key_env names %s, which is not set; calling the endpoint without a key", ec.APIKeyEnv)
		}
	}
	dir := ec.CacheDir
	if dir == "" {
		dir = userCacheDir("embeddings")
	}
	return match.NewEmbedding(match.EmbeddingOptions{
		URL: ec.URL, Model: ec.Model, APIKey: key, CacheDir: dir,
		BatchSize: ec.BatchSize, Timeout: time.Duration(ec.Timeout),
	})
}

// Match ranks the catalog for message. limit > 0 overrides match.limit. A
// failing matcher (an unreachable embedding endpoint) is a warning and no
// match, as in the reference implementation; only configuration errors
// are returned.
func (h *Host) Match(ctx context.Context, message string, limit int) ([]match.Match, error) {
	e, err := h.Matcher()
	if err != nil {
		return nil, err
	}
	ms, err := e.MatchLimit(ctx, message, limit)
	if err != nil {
		h.Warn("matching failed, so no skill is matched: %v", err)
		return nil, nil
	}
	return ms, nil
}

// searchLimit is how many candidates Search returns when not told.
const searchLimit = 5

// Search ranks the skills for query, best first: at most limit (0: 5) of
// those with any evidence, whether or not they pass the threshold, which
// it returns too. Abstaining is for automatic activation; a search lists
// the best candidates.
func (h *Host) Search(ctx context.Context, query string, limit int) ([]match.Match, float64, error) {
	e, err := h.Matcher()
	if err != nil {
		return nil, 0, err
	}
	ranked, err := e.Rank(ctx, query)
	if err != nil {
		return nil, 0, err
	}
	if limit <= 0 {
		limit = searchLimit
	}
	var out []match.Match
	for _, m := range ranked {
		if m.Score <= 0 || len(out) == limit {
			break
		}
		out = append(out, m)
	}
	return out, e.Threshold(), nil
}

// Activation is what an agent needs for one turn: the matched skills, their
// instructions (best first, each under a heading that names the skill and
// its base directory, separated by a rule) and their tools.
type Activation struct {
	Skills       []match.Match
	Instructions string
	Tools        []Function
}

// Activate matches message and gathers the matched skills' instructions and
// tools.
func (h *Host) Activate(ctx context.Context, message string) (Activation, error) {
	ms, err := h.Match(ctx, message, 0)
	if err != nil {
		return Activation{}, err
	}
	var a Activation
	a.Skills = ms
	var parts []string
	var skills []*skill.Skill
	for _, m := range ms {
		skills = append(skills, m.Skill)
		if m.Skill.Instructions != "" {
			parts = append(parts, InstructionsBlock(m.Skill))
		}
	}
	a.Tools = Functions(skills)
	a.Instructions = strings.Join(parts, "\n\n---\n\n")
	return a, nil
}

// InstructionsBlock is one skill's instructions under a heading that names
// the skill and the directory its relative paths (references/format.md,
// scripts/x.py) are relative to.
func InstructionsBlock(s *skill.Skill) string {
	return fmt.Sprintf("# Skill: %s\nBase directory: %s (relative paths below are relative to it)\n\n%s", s.Name, s.Dir, s.Instructions)
}

// PromptCatalog renders the catalog for a system prompt. With a message,
// skills are ranked by relevance to it (and the least relevant dropped
// first over the budget); otherwise they keep catalog (name) order.
func (h *Host) PromptCatalog(ctx context.Context, format string, budget int, message string) (match.PromptResult, error) {
	skills := h.Catalog.All()
	if message != "" {
		e, err := h.Matcher()
		if err != nil {
			return match.PromptResult{}, err
		}
		ranked, err := e.Rank(ctx, message)
		if err != nil {
			h.Warn("ranking failed, so the catalog keeps name order: %v", err)
		} else {
			skills = skills[:0]
			for _, m := range ranked {
				skills = append(skills, m.Skill)
			}
		}
	}
	res, err := match.Prompt(skills, format, budget)
	if err != nil {
		return res, &UsageError{fmt.Errorf("prompt: %w", err)}
	}
	return res, nil
}

// ExplainMatch ranks the skills that share a term with message, each with
// how the lexical matcher reached its score, matched or not: at most limit
// (0: match.limit). It fails with match.ErrNoExplanation under another
// strategy.
func (h *Host) ExplainMatch(ctx context.Context, message string, limit int) ([]match.Explained, error) {
	e, err := h.Matcher()
	if err != nil {
		return nil, err
	}
	return e.Explain(ctx, message, limit)
}

// userCacheDir is the directory of skillhost's cache called name under the
// user's cache directory, or "" when there is none.
func userCacheDir(name string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "skillhost", name)
}

// strength is a factor's strength as LexicalOptions reads it: the
// configuration's 0 turns the factor off, while LexicalOptions reads zero
// as the default and a negative value as off; nil is the default.
func strength[T int | float64](v *T) T {
	switch {
	case v == nil:
		return 0
	case *v == 0:
		return -1
	}
	return *v
}
