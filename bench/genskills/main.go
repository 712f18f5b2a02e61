// Command genskills writes N generated skills under DIR for the catalog
// benchmarks: each a SKILL.md with capabilities and a body, and one
// executable script.
//
//	genskills DIR N
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

var topics = []string{"invoices", "deployments", "weather", "spreadsheets", "logs", "images", "calendars", "emails", "databases", "tests"}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genskills DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "genskills: N must be a count")
		os.Exit(2)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("skill-%d", i)
		dir := filepath.Join(os.Args[1], name)
		must(os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
		topic := topics[i%len(topics)]
		md := fmt.Sprintf("---\nname: %s\ndescription: Summarise and check %s, batch %d; use when the user asks about %s reports.\nfs_read: [\"./data\"]\ntimeout: 5\n---\n# %s\n\nRead the %s, check them, and write a short report.\n", name, topic, i, topic, name, topic)
		must(os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644))
		must(os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("#!/bin/sh\n# Print a greeting\necho hi\n"), 0o755))
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "genskills:", err)
		os.Exit(1)
	}
}
