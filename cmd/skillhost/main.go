// Command skillhost discovers, validates, matches and runs Agent Skills,
// running their scripts under a sandbox plugin.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
