package match

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Label is one labelled message of an evaluation set: the skill that
// should rank first for Message, or none (Expect empty) when no skill in
// the catalog fits and the matcher should abstain.
type Label struct {
	Message string `json:"message"`
	Expect  string `json:"expect,omitempty"`
	// Line is where the label was read, for messages about it.
	Line int `json:"-"`
}

// ReadLabels reads an evaluation set in JSON Lines: one object per line,
// {"message": "...", "expect": "skill-name"}, with "expect" absent, null
// or "" for an off-topic message. Blank lines and lines starting with #
// are skipped. Errors name the file (name) and the line.
func ReadLabels(r io.Reader, name string) ([]Label, error) {
	var out []Label
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var raw struct {
			Message *string `json:"message"`
			Expect  *string `json:"expect"`
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		if raw.Message == nil || strings.TrimSpace(*raw.Message) == "" {
			return nil, fmt.Errorf("%s:%d: \"message\" is missing or empty", name, line)
		}
		l := Label{Message: *raw.Message, Line: line}
		if raw.Expect != nil {
			l.Expect = strings.TrimSpace(*raw.Expect)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no labelled messages", name)
	}
	return out, nil
}

// Outcome is how the matcher ranked one labelled message.
type Outcome struct {
	Label Label
	// Rank is the 1-based position of the expected skill in the full
	// ranking, whatever its score (0 for an off-topic message).
	Rank int
	// Score is the expected skill's score (0 for an off-topic message).
	Score float64
	// Top are the best-ranked skills with their scores, at most three.
	Top []Scored
}

// Scored is a skill name and its score.
type Scored struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// Evaluation is the ranking of every labelled message, from which metrics
// at any threshold follow without scoring again.
type Evaluation struct {
	Skills   int
	Outcomes []Outcome
}

// Evaluate ranks each labelled message with e. A label that expects a
// skill the catalog does not have is an error naming its line, since the
// set would otherwise measure nothing.
func Evaluate(ctx context.Context, e *Engine, labels []Label, name string) (*Evaluation, error) {
	skills, err := e.indexed(ctx)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, s := range skills {
		known[s.Name] = true
	}
	ev := &Evaluation{Skills: len(skills)}
	for _, l := range labels {
		if l.Expect != "" && !known[l.Expect] {
			return nil, fmt.Errorf("%s:%d: \"expect\" names %q, which is not in the catalog", name, l.Line, l.Expect)
		}
		ranked, err := e.Rank(ctx, l.Message)
		if err != nil {
			return nil, err
		}
		o := Outcome{Label: l}
		for i, m := range ranked {
			if i < 3 && m.Score > 0 {
				o.Top = append(o.Top, Scored{m.Skill.Name, m.Score})
			}
			if l.Expect != "" && m.Skill.Name == l.Expect && o.Rank == 0 {
				o.Rank, o.Score = i+1, m.Score
			}
		}
		ev.Outcomes = append(ev.Outcomes, o)
	}
	return ev, nil
}

// Metrics summarise an evaluation at one threshold. Only matches at or
// above the threshold count: what an agent would be given.
type Metrics struct {
	Threshold float64 `json:"threshold"`
	Messages  int     `json:"messages"`
	OnTopic   int     `json:"on_topic"`
	OffTopic  int     `json:"off_topic"`
	// Hit1, Hit3 and MRR are over on-topic messages; a skill below the
	// threshold counts as not found.
	Hit1 float64 `json:"hit_at_1"`
	Hit3 float64 `json:"hit_at_3"`
	MRR  float64 `json:"mrr"`
	// Abstain is the share of off-topic messages that matched nothing.
	Abstain float64 `json:"abstain"`
	// Silent is the share of on-topic messages that matched nothing.
	Silent float64 `json:"silent"`
}

// At returns the metrics at threshold.
func (ev *Evaluation) At(threshold float64) Metrics {
	m := Metrics{Threshold: threshold, Messages: len(ev.Outcomes)}
	for _, o := range ev.Outcomes {
		matched := len(o.Top) > 0 && o.Top[0].Score >= threshold
		if o.Label.Expect == "" {
			m.OffTopic++
			if !matched {
				m.Abstain++
			}
			continue
		}
		m.OnTopic++
		if !matched {
			m.Silent++
		}
		if o.Rank == 0 || o.Score < threshold || o.Score <= 0 {
			continue
		}
		if o.Rank == 1 {
			m.Hit1++
		}
		if o.Rank <= 3 {
			m.Hit3++
		}
		m.MRR += 1 / float64(o.Rank)
	}
	div := func(v *float64, n int) {
		if n > 0 {
			*v /= float64(n)
		}
	}
	div(&m.Hit1, m.OnTopic)
	div(&m.Hit3, m.OnTopic)
	div(&m.MRR, m.OnTopic)
	div(&m.Silent, m.OnTopic)
	div(&m.Abstain, m.OffTopic)
	return m
}

// Misses returns the outcomes that are wrong at threshold: an on-topic
// message whose skill is not first above it, or an off-topic message that
// matched something.
func (ev *Evaluation) Misses(threshold float64) []Outcome {
	var out []Outcome
	for _, o := range ev.Outcomes {
		matched := len(o.Top) > 0 && o.Top[0].Score >= threshold
		if o.Label.Expect == "" && matched || o.Label.Expect != "" && (o.Rank != 1 || o.Score < threshold || o.Score <= 0) {
			out = append(out, o)
		}
	}
	return out
}

// Curve returns the metrics at each threshold, in ascending order: the
// trade-off between answering (Hit@1) and abstaining on off-topic
// messages.
func (ev *Evaluation) Curve(thresholds []float64) []Metrics {
	ts := append([]float64(nil), thresholds...)
	sort.Float64s(ts)
	out := make([]Metrics, len(ts))
	for i, t := range ts {
		out[i] = ev.At(t)
	}
	return out
}

// Threshold is the engine's minimum score.
func (e *Engine) Threshold() float64 { return e.threshold }
