// Command skillhost-supervisor-landlock is the Landlock plugin's run
// supervisor: skillhost-sandbox-landlock starts it for each run instead of
// re-executing itself, because it links only the confiner and starts in a
// fraction of the plugin binary's time. It registers the same confiner, under
// the same name and options, as the plugin, so that the confine helper and
// the other roles it re-executes itself for find it too. runner.New does
// the job argv names and exits; started any other way, it says what it is
// and exits with status 2.
package main

import (
	"fmt"
	"os"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
	"github.com/skillhost/skillhost/shared/runner"
)

func main() {
	runner.New(confiner.Option())
	fmt.Fprintln(os.Stderr, "skillhost-supervisor-landlock: the Landlock plugin's run supervisor; it is started by skillhost-sandbox-landlock, not by hand")
	os.Exit(2)
}
