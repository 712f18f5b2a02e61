package host_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/host/internal/sandbox"
)

// Embedding skillhost: open the host, find the skills that fit a message,
// run one of their tools while watching its events, and close the plugin
// processes at the end.
func Example() {
	h, err := host.Open(host.Options{
		SkillRoots: []string{"../examples/skills"},
		Warnings:   os.Stderr,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close() // stops the sandbox plugins the host started

	ctx := context.Background()
	act, err := h.Activate(ctx, "how many words does this article have?")
	if err != nil {
		log.Fatal(err)
	}
	best := act.Skills[0].Skill
	fmt.Println("skill:", best.Name)
	// act.Instructions goes into the model's context; act.Tools are the
	// tools to offer it.

	var streamed strings.Builder
	res, err := h.Run(ctx, host.RunRequest{
		Skill: best.Name,
		Tool:  "count",
		Args:  []string{"../examples/data/article.txt"},
		// "none" runs the script unconfined so that this example needs no
		// plugin binaries; leave Strategy empty to use the configured
		// sandbox (Landlock on Linux, Seatbelt on macOS).
		Strategy: sandbox.InProcess,
	}, func(e events.Event) error {
		if d, ok := e.Data.(host.OutputDelta); ok {
			streamed.WriteString(d.Delta) // as the script writes it
		} else {
			fmt.Println("event:", e.Event)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("streamed output matches the result:", streamed.String() == res.Output)
	fmt.Println("ok:", res.OK())
	fmt.Print(res.Text())
	// Output:
	// skill: text-stats
	// event: run.started
	// event: run.completed
	// event: stream.ended
	// streamed output matches the result: true
	// ok: true
	// ../examples/data/article.txt: 5 lines, 60 words, 356 bytes
}
