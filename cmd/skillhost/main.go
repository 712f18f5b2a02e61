// Command skillhost discovers, validates, matches and runs Agent Skills,
// running their scripts under a sandbox plugin.
package main

import (
	"os"

	"github.com/skillhost/skillhost/host"
)

func main() {
	host.Init()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
