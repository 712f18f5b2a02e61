package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host/events"
)

// Output deltas carry whole characters even when a chunk ends inside one,
// and nothing is lost or reordered.
func TestRunEventsOutputSplitsOnCharacters(t *testing.T) {
	tests := []struct {
		chunks []string
		want   []string
	}{
		{[]string{"abc", "def"}, []string{"abc", "def"}},
		{[]string{"a\xc3", "\xa9b"}, []string{"a", "éb"}},
		{[]string{"\xe2", "\x82", "\xac!"}, []string{"€!"}},
		{[]string{"x\xf0\x9f", "\x98\x80"}, []string{"x", "😀"}},
		{[]string{"end\xe2\x82"}, []string{"end", "\xe2\x82"}},   // flushed at the end as it is
		{[]string{"\xff\xfe", "ok"}, []string{"\xff\xfe", "ok"}}, // invalid bytes are not held
	}
	for _, tt := range tests {
		var got []string
		ev := &runEvents{ctx: events.New(events.Options{RunID: "r", Publish: func(e events.Event) error {
			got = append(got, e.Data["delta"].(string))
			return nil
		}})}
		for _, c := range tt.chunks {
			ev.output([]byte(c))
		}
		ev.flush()
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("chunks %q gave deltas %q, want %q", tt.chunks, got, tt.want)
		}
	}
	var nilEvents *runEvents
	nilEvents.output([]byte("x")) // publishes nothing, does not panic
	nilEvents.flush()
}

// A consumer that fails on every event neither stops the run nor floods the
// warnings.
func TestRunWithFailingConsumer(t *testing.T) {
	t.Setenv("SKILLHOST_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var warnings strings.Builder
	h, err := Open(Options{SkillRoots: []string{"../examples/skills"}, Warnings: &warnings})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	calls := 0
	res, err := h.Run(context.Background(), RunRequest{
		Skill: "text-stats", Tool: "count", Args: []string{"../examples/data/article.txt"}, Strategy: InProcessName,
	}, func(events.Event) error { calls++; return errors.New("broken pipe") })
	if err != nil || !res.OK() || !strings.Contains(string(res.Output), "60 words") {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if calls < 4 {
		t.Errorf("consumer called %d times; want every event", calls)
	}
	if n := strings.Count(warnings.String(), "event consumer failed"); n != 1 || !strings.Contains(warnings.String(), "broken pipe") {
		t.Errorf("%d warnings:\n%s", n, warnings.String())
	}
}
