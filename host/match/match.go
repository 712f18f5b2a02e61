// Package match ranks a catalog's skills for a user's message, so an agent
// can load the instructions and tools of the skills that fit and nothing
// else. The default matcher is lexical (BM25F, offline, nothing to
// download); an OpenAI-compatible embeddings endpoint and a hybrid of both
// are available.
package match

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/skill"
)

// Doc is what a matcher indexes of one skill.
type Doc struct {
	Name        string
	Description string
	Body        string
	// Tools are the skill's tools, each its name and description.
	Tools []string
}

// docOf returns the indexed parts of s.
func docOf(s *skill.Skill) Doc {
	d := Doc{Name: s.Name, Description: s.Description, Body: s.Instructions}
	for _, t := range s.Tools {
		d.Tools = append(d.Tools, t.Name+": "+t.Description)
	}
	return d
}

// Matcher scores messages against an indexed set of documents. Scores are
// in [0, 1] and comparable across messages, so one threshold can say "no
// skill fits". Implementations are safe for concurrent use; Index replaces
// the whole set.
type Matcher interface {
	Index(ctx context.Context, docs []Doc) error
	// Score returns one score per indexed document, in index order.
	Score(ctx context.Context, message string) ([]float64, error)
}

// Match is a skill and its score.
type Match struct {
	Skill *skill.Skill
	Score float64
}

// Engine ranks the skills of a catalog, re-indexing whenever the catalog
// reloads. It is safe for concurrent use.
type Engine struct {
	cat       *catalog.Catalog
	m         Matcher
	threshold float64
	limit     int

	// mu guards the index: the matcher's and skills, in the same order.
	// Scoring holds it for reading, so a reload cannot re-index between
	// the skills and their scores.
	mu     sync.RWMutex
	gen    uint64
	skills []*skill.Skill
}

// NewEngine ranks cat's skills with m, keeping scores at or above
// threshold and at most limit matches (0: no cap).
func NewEngine(cat *catalog.Catalog, m Matcher, threshold float64, limit int) *Engine {
	return &Engine{cat: cat, m: m, threshold: threshold, limit: limit}
}

// indexed returns the skills in index order, indexing first if the
// catalog changed since the last call.
func (e *Engine) indexed(ctx context.Context) ([]*skill.Skill, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	gen := e.cat.Generation()
	if e.skills != nil && gen == e.gen {
		return e.skills, nil
	}
	skills := e.cat.All()
	docs := make([]Doc, len(skills))
	for i, s := range skills {
		docs[i] = docOf(s)
	}
	if err := e.m.Index(ctx, docs); err != nil {
		return nil, err
	}
	e.skills, e.gen = skills, gen
	return skills, nil
}

// withIndex calls use with the skills in index order, re-indexing first if
// the catalog changed, and holds the index while use runs: the skills and
// what the matcher scores are always the same set in the same order, even
// when the catalog reloads meanwhile (use then sees the set it indexed).
func (e *Engine) withIndex(ctx context.Context, use func([]*skill.Skill) error) error {
	e.mu.RLock()
	if e.skills == nil || e.gen != e.cat.Generation() {
		e.mu.RUnlock()
		if _, err := e.indexed(ctx); err != nil {
			return err
		}
		e.mu.RLock()
	}
	defer e.mu.RUnlock()
	return use(e.skills)
}

// Rank returns every skill with its score, best first.
func (e *Engine) Rank(ctx context.Context, message string) ([]Match, error) {
	var skills []*skill.Skill
	var scores []float64
	err := e.withIndex(ctx, func(s []*skill.Skill) (err error) {
		skills = s
		scores, err = e.m.Score(ctx, message)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(scores) != len(skills) {
		return nil, fmt.Errorf("match: %d scores for %d skills", len(scores), len(skills))
	}
	out := make([]Match, len(skills))
	for i, s := range skills {
		out[i] = Match{Skill: s, Score: scores[i]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}

// Match returns the skills that fit message: score at or above the
// threshold, best first, at most the engine's limit.
func (e *Engine) Match(ctx context.Context, message string) ([]Match, error) {
	return e.MatchLimit(ctx, message, 0)
}

// MatchLimit is Match with at most limit matches instead, when limit > 0.
func (e *Engine) MatchLimit(ctx context.Context, message string, limit int) ([]Match, error) {
	if limit <= 0 {
		limit = e.limit
	}
	ranked, err := e.Rank(ctx, message)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, m := range ranked {
		if m.Score < e.threshold || m.Score <= 0 {
			break
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, m)
	}
	return out, nil
}

// explainer is a Matcher that can say how it reached its scores. The
// lexical matcher is one; the embedding and hybrid matchers are not.
type explainer interface {
	Explain(ctx context.Context, message string) ([]Explanation, error)
}

// ErrNoExplanation is returned by Engine.Explain when its matcher is not an
// explainer.
var ErrNoExplanation = errors.New("only the lexical matcher explains its scores (match.strategy: lexical)")

// Explained is a skill, its score, whether it reaches the threshold, and
// how the matcher reached the score.
type Explained struct {
	Match
	Matched     bool
	Explanation Explanation
}

// Explain ranks the skills that share a term with message, best first,
// each with its explanation, whether or not it reaches the threshold, so
// that a miss can be explained as well as a match. At most limit skills
// (0: the engine's limit; none either: all).
func (e *Engine) Explain(ctx context.Context, message string, limit int) ([]Explained, error) {
	x, ok := e.m.(explainer)
	if !ok {
		return nil, ErrNoExplanation
	}
	if limit <= 0 {
		limit = e.limit
	}
	var skills []*skill.Skill
	var ex []Explanation
	err := e.withIndex(ctx, func(s []*skill.Skill) (err error) {
		skills = s
		ex, err = x.Explain(ctx, message)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []Explained
	for i, s := range skills {
		if i < len(ex) && ex[i].Score > 0 {
			out = append(out, Explained{Match: Match{Skill: s, Score: ex[i].Score}, Explanation: ex[i],
				Matched: ex[i].Score >= e.threshold})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
