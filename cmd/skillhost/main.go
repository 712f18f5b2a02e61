// Command skillhost discovers, validates, matches and runs Agent Skills,
// running their scripts under a sandbox plugin.
package main

import (
	"os"

	"github.com/skillhost/skillhost/shared/runner"
)

func main() {
	runner.Init()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
