package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/term"
)

// reviewer is run --review's question: it shows a staged run's changes on
// the terminal, each with a diff of text files, and asks before any is
// applied. Without a terminal to ask on it applies none: they are kept.
func (a *app) reviewer(h *host.Host) func(context.Context, string, []changeset.Change) bool {
	return func(ctx context.Context, run string, cs []changeset.Change) bool {
		if !term.IsTerminal(os.Stdin) || !term.IsTerminal(a.stderr) {
			fmt.Fprintf(a.stderr, "skillhost: --review asks on a terminal, and there is none; the run's changes are kept: skillhost changes show %s\n", run)
			return false
		}
		w := term.NewWriter(a.stderr)
		fmt.Fprintf(w, "\nThe run changed %d paths:\n", len(cs))
		for _, c := range cs {
			writeChange(w, h, run, c)
		}
		fmt.Fprint(w, "Apply them? Protected paths are refused either way. [y/N] ")
		w.Flush()
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case got := <-answer:
			if got == "y" || got == "yes" {
				return true
			}
		case <-ctx.Done():
		}
		fmt.Fprintf(a.stderr, "not applied; kept: skillhost changes apply %s\n", run)
		return false
	}
}
