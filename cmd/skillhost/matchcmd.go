package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/skill"
)

type scoreJSON struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// explainedJSON is one skill of match --explain --json.
type explainedJSON struct {
	Name    string  `json:"name"`
	Score   float64 `json:"score"`
	Matched bool    `json:"matched"`
	// Evidence is after the anchor, unknown-word, code, everyday,
	// breadth, coverage and semantic factors.
	Evidence float64 `json:"evidence"`
	Anchored bool    `json:"anchored"`
	// Anchors is how many of the message's terms are in the skill's name
	// or description; Anchor is the factor several of them gave (1 with
	// none or one, or when off; with none, Unanchored applies instead).
	Anchors int     `json:"anchors"`
	Anchor  float64 `json:"anchor"`
	Known   float64 `json:"known"`
	Code    float64 `json:"code"`
	// EverydayProbability is the classifier's probability that the
	// message is an everyday question, absent when the factor is off;
	// Everyday is the factor it gave (1 when off).
	EverydayProbability *float64 `json:"everyday_probability,omitempty"`
	Everyday            float64  `json:"everyday"`
	// Breadth is the share of the background messages the skill matches,
	// absent when the breadth factor is off; Narrow is the factor it gave
	// (1 when off).
	Breadth    *float64   `json:"breadth,omitempty"`
	Narrow     float64    `json:"narrow"`
	Coverage   float64    `json:"coverage"`
	Covered    int        `json:"covered"`
	Words      int        `json:"words"`
	Similarity float64    `json:"similarity"`
	Semantic   float64    `json:"semantic"`
	Terms      []termJSON `json:"terms"`
}

type termJSON struct {
	Term     string   `json:"term"`
	Evidence float64  `json:"evidence"`
	Fields   []string `json:"fields"`
}

// explainLimit is how many skills --explain shows when neither --limit nor
// match.limit says.
const explainLimit = 5

// explain prints how the lexical matcher scored the skills that share a
// term with message.
func (a *app) explain(h *host.Host, message string, limit int) error {
	if limit <= 0 && h.Config.Match.Limit <= 0 {
		// Every skill that shares a common word would be thousands in a
		// large catalog.
		limit = explainLimit
	}
	ex, err := h.ExplainMatch(context.Background(), message, limit)
	if err != nil {
		return usage(fmt.Errorf("--explain: %w", err))
	}
	if a.jsonOut {
		out := []explainedJSON{}
		for _, x := range ex {
			j := explainedJSON{Name: x.Skill.Name, Score: round(x.Score), Matched: x.Matched,
				Evidence: round(x.Explanation.Evidence), Anchored: x.Explanation.Anchored,
				Anchors: x.Explanation.Anchors, Anchor: round(x.Explanation.Anchor),
				Known: round(x.Explanation.Known), Code: round(x.Explanation.Code),
				Everyday: round(x.Explanation.Everyday), Narrow: round(x.Explanation.Narrow), Coverage: round(x.Explanation.Coverage),
				Covered: x.Explanation.Covered, Words: x.Explanation.Words,
				Similarity: round(x.Explanation.Similarity), Semantic: round(x.Explanation.Semantic), Terms: []termJSON{}}
			if x.Explanation.EverydayOn {
				p := round(x.Explanation.EverydayProbability)
				j.EverydayProbability = &p
			}
			if x.Explanation.BreadthOn {
				b := round(x.Explanation.Breadth)
				j.Breadth = &b
			}
			for _, t := range x.Explanation.Terms {
				j.Terms = append(j.Terms, termJSON{Term: t.Term, Evidence: round(t.Evidence), Fields: t.Fields})
			}
			out = append(out, j)
		}
		return a.printJSON(out)
	}
	if len(ex) == 0 {
		fmt.Fprintln(a.stderr, "no skill shares a word with this message")
		return nil
	}
	threshold := 0.0
	if e, err := h.Matcher(); err == nil {
		threshold = e.Threshold()
	}
	for i, x := range ex {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		verdict := "matched"
		if !x.Matched {
			verdict = "below the threshold " + formatThreshold(threshold)
		}
		fmt.Fprintf(a.stdout, "%.3f  %s  (%s)\n", x.Score, skill.Printable(x.Skill.Name), verdict)
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		for _, t := range x.Explanation.Terms {
			fmt.Fprintf(tw, "  %s\t%.3f\t%s\n", skill.Printable(t.Term), t.Evidence, strings.Join(t.Fields, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if !x.Explanation.Anchored {
			fmt.Fprintln(a.stdout, "  no term in the name or description: evidence scaled down")
		}
		if x.Explanation.Anchor != 1 {
			fmt.Fprintf(a.stdout, "  %d of the message's terms in the name or description: evidence x%.2f\n", x.Explanation.Anchors, x.Explanation.Anchor)
		}
		if x.Explanation.Known < 1 {
			fmt.Fprintf(a.stdout, "  words no skill uses: evidence x%.2f\n", x.Explanation.Known)
		}
		if x.Explanation.Code != 1 {
			fmt.Fprintf(a.stdout, "  code or markup in the message: evidence x%.2f\n", x.Explanation.Code)
		}
		if x.Explanation.Everyday != 1 {
			fmt.Fprintf(a.stdout, "  everyday-question probability %.2f: evidence x%.3g\n", x.Explanation.EverydayProbability, x.Explanation.Everyday)
		}
		if x.Explanation.Narrow != 1 {
			fmt.Fprintf(a.stdout, "  a broad skill (matches %.1f%% of messages written for other skills): evidence x%.2f\n", 100*x.Explanation.Breadth, x.Explanation.Narrow)
		}
		if x.Explanation.Coverage < 1 {
			fmt.Fprintf(a.stdout, "  has %d of the message's %d words: evidence x%.2f\n", x.Explanation.Covered, x.Explanation.Words, x.Explanation.Coverage)
		}
		if x.Explanation.Semantic != 1 {
			fmt.Fprintf(a.stdout, "  meaning: word-vector similarity %.2f to the message: evidence x%.2f\n", x.Explanation.Similarity, x.Explanation.Semantic)
		}
		fmt.Fprintf(a.stdout, "  evidence %.3f -> score %.3f\n", x.Explanation.Evidence, x.Score)
	}
	return nil
}

func scores(ms []match.Match) []scoreJSON {
	out := []scoreJSON{}
	for _, m := range ms {
		out = append(out, scoreJSON{Name: m.Skill.Name, Score: round(m.Score)})
	}
	return out
}

func round(f float64) float64 { return float64(int(f*10000+0.5)) / 10000 }

func (a *app) matchCmd() *cobra.Command {
	var limit int
	var evalPath string
	var explain bool
	cmd := &cobra.Command{
		Use:   "match MESSAGE | match --eval LABELS.jsonl",
		Short: "Rank the skills that fit a message (scores in [0, 1], above match.threshold)",
		Long: "Match prints the skills whose score for MESSAGE reaches match.threshold, best first.\n\n" +
			"With --eval it measures the configured matcher on the catalog (--skills or skills.roots)\n" +
			"instead: LABELS.jsonl holds one {\"message\": ..., \"expect\": \"skill-name\"} per line, with no\n" +
			"\"expect\" for a message no skill should match. It prints Hit@1, Hit@3, MRR, the share of\n" +
			"off-topic messages that matched nothing (abstain), the misses, and Hit@1 and abstain at\n" +
			"other thresholds (see docs/matching.md).\n\n" +
			"With --explain it shows, for the skills that share a term with MESSAGE (matched or not, at\n" +
			"most --limit, else match.limit, else 5), the evidence each term adds and where the skill has\n" +
			"it, the factors for a skill with none of the message's terms in its name or description (or\n" +
			"with several), for words no skill uses, for code, markup or a formula pasted into the\n" +
			"message, for an everyday question (\"my dentist billed me twice\"), for a broad skill (one\n" +
			"that matches many messages written for other skills), for the share of the message's words\n" +
			"the skill has and for how close their meanings are (the word-vector similarity), and the\n" +
			"score.",
		Args: args(func(cmd *cobra.Command, argv []string) error {
			if evalPath != "" {
				if len(argv) > 0 {
					return fmt.Errorf("match --eval takes no MESSAGE")
				}
				return nil
			}
			return cobra.ExactArgs(1)(cmd, argv)
		}),
		RunE: func(_ *cobra.Command, argv []string) error {
			if evalPath != "" && explain {
				return usage(fmt.Errorf("--explain and --eval: use one or the other"))
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			if evalPath != "" {
				return a.evaluate(h, evalPath)
			}
			if explain {
				return a.explain(h, argv[0], limit)
			}
			ms, err := h.Match(context.Background(), argv[0], limit)
			if err != nil {
				return usage(err)
			}
			if a.jsonOut {
				return a.printJSON(scores(ms))
			}
			if len(ms) == 0 {
				fmt.Fprintln(a.stderr, "no skill fits this message")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			for _, m := range ms {
				fmt.Fprintf(tw, "%.3f\t%s\t%s\n", m.Score, skill.Printable(m.Skill.Name), oneLine(m.Skill.Description, 70))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many skills (0: match.limit)")
	cmd.Flags().StringVar(&evalPath, "eval", "", "measure matching on the catalog with the labelled messages in this JSONL file")
	cmd.Flags().BoolVar(&explain, "explain", false, "show how each skill's score came about (lexical matcher)")
	return cmd
}

type activatedJSON struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
	// Dir is the skill's base directory: its instructions name files
	// relative to it.
	Dir          string `json:"dir"`
	File         string `json:"file"`
	Instructions string `json:"instructions"`
}

func (a *app) activateCmd() *cobra.Command {
	var tools string
	cmd := &cobra.Command{
		Use:   "activate MESSAGE",
		Short: "What an agent needs for this turn: matched skills, their instructions and their tools",
		Long: "Activate matches the message and prints the matched skills (with their directories), their\n" +
			"instructions (each under a heading naming the skill and its base directory) and their tools,\n" +
			"named skill__tool so that the names are unique and valid in the common LLM APIs. With\n" +
			"--tools openai or --tools anthropic the tools are ready-to-send function definitions.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			h, err := a.open()
			if err != nil {
				return err
			}
			act, err := h.Activate(context.Background(), argv[0])
			if err != nil {
				return usage(err)
			}
			if a.jsonOut || tools != "" {
				skills := []activatedJSON{}
				for _, m := range act.Skills {
					skills = append(skills, activatedJSON{Name: m.Skill.Name, Score: round(m.Score), Dir: m.Skill.Dir,
						File: m.Skill.File, Instructions: m.Skill.Instructions})
				}
				out := map[string]any{"skills": skills, "instructions": act.Instructions, "tools": act.Tools}
				if act.Tools == nil {
					out["tools"] = []any{}
				}
				if tools != "" {
					defs, err := host.FunctionDefs(act.Tools, tools)
					if err != nil {
						return usage(err)
					}
					out["tools"] = defs
				}
				return a.printJSON(out)
			}
			if len(act.Skills) == 0 {
				fmt.Fprintln(a.stderr, "no skill fits this message")
				return nil
			}
			var names []string
			for _, m := range act.Skills {
				names = append(names, fmt.Sprintf("%s (%.3f)", skill.Printable(m.Skill.Name), m.Score))
			}
			fmt.Fprintf(a.stdout, "# Skills: %s\n\n%s\n", strings.Join(names, ", "), skill.Printable(act.Instructions))
			if len(act.Tools) > 0 {
				fmt.Fprintln(a.stdout, "\n# Tools")
				for _, t := range act.Tools {
					fmt.Fprintf(a.stdout, "- %s: %s\n", t.Name, oneLine(t.Description, 500))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&tools, "tools", "", "print the tools as function definitions: openai or anthropic (implies --json)")
	return cmd
}

func (a *app) promptCmd() *cobra.Command {
	var budget int
	var format, message string
	cmd := &cobra.Command{
		Use:   "prompt",
		Short: "Print the catalog for a system prompt (<available_skills>), within a character budget",
		Long: "Prompt prints every skill's name, description and SKILL.md location, in the form of the\n" +
			"Agent Skills reference tool. Over --budget it shortens descriptions first, then drops the\n" +
			"lowest-ranked skills (by relevance to --for MESSAGE, else the last by name), and says so on stderr.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.jsonOut && !cmd.Flags().Changed("format") {
				format = match.FormatJSON
			}
			if format != match.FormatXML && format != match.FormatJSON {
				return usage(fmt.Errorf("--format: %q is neither xml nor json", format))
			}
			if budget < 0 {
				return usage(fmt.Errorf("--budget: must not be negative"))
			}
			h, err := a.open()
			if err != nil {
				return err
			}
			h.CatalogWarnings()
			res, err := h.PromptCatalog(context.Background(), format, budget, message)
			if err != nil {
				return err
			}
			if res.Shortened > 0 && !a.quiet {
				fmt.Fprintf(a.stderr, "prompt: shortened %s to %d characters to fit the budget of %d\n", plural(res.Shortened, "description", "descriptions"), res.ShortenedTo, budget)
			}
			if len(res.Dropped) > 0 && !a.quiet {
				fmt.Fprintf(a.stderr, "prompt: dropped %s to fit the budget of %d: %s\n", plural(len(res.Dropped), "skill", "skills"), budget, strings.Join(res.Dropped, ", "))
			}
			fmt.Fprint(a.stdout, res.Text)
			return nil
		},
	}
	cmd.Flags().IntVar(&budget, "budget", 0, "maximum length in characters (0: no limit)")
	cmd.Flags().StringVar(&format, "format", match.FormatXML, "xml or json")
	cmd.Flags().StringVar(&message, "for", "", "rank skills by relevance to this message")
	return cmd
}
