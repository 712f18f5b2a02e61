package match

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestBreadthFactor(t *testing.T) {
	cases := []struct{ breadth, strength, centre, want float64 }{
		{0.15, 1, 0.05, 1.0 / 3},
		{0.2, 0.75, 0.05, math.Pow(0.25, 0.75)},
		{0.05, 1, 0.05, 1},                // at the centre: untouched
		{0.01, 1, 0.05, 1},                // narrower than the centre: never raised
		{0, 1, 0.05, 1},                   // matches no background message
		{0.5, 0, 0.05, 1},                 // off
		{0.5, -1, 0.05, 1},                // off
		{1, 20, 0.05, math.Pow(0.05, 20)}, // strong, but finite and positive
	}
	for _, c := range cases {
		got := breadthFactor(c.breadth, c.strength, c.centre)
		if math.Abs(got-c.want) > 1e-9*c.want+1e-300 {
			t.Errorf("breadthFactor(%v, %v, %v) = %v, want %v", c.breadth, c.strength, c.centre, got, c.want)
		}
	}
}

// breadthDocs are a skill whose words are everyone's and one whose words
// are its own.
var breadthDocs = []Doc{
	{Name: "writing-helper", Description: "Help write, create, edit and improve any document, file, text, code or project."},
	{Name: "terraform-state", Description: "Unlock, import and migrate Terraform state stored in S3 with DynamoDB locking."},
}

// breadthBackground has enough messages for measureBreadth to share them
// among several goroutines.
func breadthBackground() []string {
	base := []string{
		"help me write a project plan",
		"create a file with my notes",
		"improve this text for my blog",
		"edit the document my boss sent",
		"write some code to rename photos",
		"the terraform state lock in dynamodb is stuck",
		"what time is the match tonight",
		"recommend a good novel",
	}
	var out []string
	for i := range 80 {
		for _, m := range base {
			out = append(out, m+strings.Repeat("!", i%3))
		}
	}
	return out
}

// TestMeasureBreadth counts, message by message with the factor off, the
// background messages that reach the breadth threshold for each skill, and
// checks the factor's measurement against the count with one processor and
// several.
func TestMeasureBreadth(t *testing.T) {
	bg := breadthBackground()
	off := lexicalOf(t, breadthDocs, LexicalOptions{Breadth: -1})
	want := make([]float64, len(breadthDocs))
	for _, m := range bg {
		s, err := off.Score(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s {
			if s[i] >= breadthThreshold {
				want[i]++
			}
		}
	}
	for i := range want {
		want[i] /= float64(len(bg))
	}
	if !(want[0] > 0.3 && want[1] > 0 && want[1] < want[0]/2) {
		t.Fatalf("shares %v: the fixture no longer has one broad and one narrow skill", want)
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		ex, err := lexicalOf(t, breadthDocs, LexicalOptions{Breadth: 1, Background: bg}).Explain(context.Background(), "write my project plan")
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ex {
			if !ex[i].BreadthOn || ex[i].Breadth != want[i] {
				t.Errorf("GOMAXPROCS %d: %s: breadth %v (on %v), want %v", procs, breadthDocs[i].Name, ex[i].Breadth, ex[i].BreadthOn, want[i])
			}
			if f := breadthFactor(want[i], 1, 0.05); ex[i].Narrow != f {
				t.Errorf("GOMAXPROCS %d: %s: factor %v, want %v", procs, breadthDocs[i].Name, ex[i].Narrow, f)
			}
		}
	}
}

// TestLexicalBreadthFactor checks that a skill's evidence is multiplied by
// its own breadth factor, that off, or no background, changes nothing, and
// that the default is on, with the built-in background.
func TestLexicalBreadthFactor(t *testing.T) {
	bg := breadthBackground()
	const message = "help me write and edit a project plan in a text file"
	explain := func(o LexicalOptions) []Explanation {
		ex, err := lexicalOf(t, breadthDocs, o).Explain(context.Background(), message)
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	without := explain(LexicalOptions{Breadth: -1})
	with := explain(LexicalOptions{Breadth: 0.75, BreadthCentre: 0.1, Background: bg})
	if without[0].Evidence == 0 {
		t.Fatal("the broad skill has no evidence: the test checks nothing")
	}
	if with[0].Narrow >= 1 {
		t.Fatalf("the broad skill's factor is %v, want < 1", with[0].Narrow)
	}
	for i := range with {
		want := breadthFactor(with[i].Breadth, 0.75, 0.1)
		if got := with[i].Evidence / max(without[i].Evidence, 1e-300); without[i].Evidence > 0 && math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: evidence x%v, want x%v", breadthDocs[i].Name, got, want)
		}
	}
	for i, x := range explain(LexicalOptions{}) {
		if !x.BreadthOn || x.Narrow != breadthFactor(x.Breadth, defaultBreadth, 0.05) {
			t.Errorf("defaults: %s: breadth %v (on %v), factor %v", breadthDocs[i].Name, x.Breadth, x.BreadthOn, x.Narrow)
		}
	}
	for _, o := range []LexicalOptions{{Breadth: -1, Background: bg}, {Breadth: 1, Background: []string{}}} {
		for i, x := range explain(o) {
			if x.BreadthOn != (o.Breadth > 0) {
				t.Errorf("%+v: %s: BreadthOn %v", o.Breadth, breadthDocs[i].Name, x.BreadthOn)
			}
			if x.Narrow != 1 || x.Evidence != without[i].Evidence {
				t.Errorf("%+v: %s: factor %v, evidence %v, want 1 and %v", o.Breadth, breadthDocs[i].Name, x.Narrow, x.Evidence, without[i].Evidence)
			}
		}
	}
}

// TestIndexCancelled checks that indexing stops with the context's error
// when the context ends during the breadth pass.
func TestIndexCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := NewLexical(LexicalOptions{Background: breadthBackground()}).Index(ctx, breadthDocs)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Index with a cancelled context: %v, want context.Canceled", err)
	}
	if err := NewLexical(LexicalOptions{Breadth: -1}).Index(ctx, breadthDocs); err != nil {
		t.Errorf("Index without the breadth pass: %v, want no error", err)
	}
}
