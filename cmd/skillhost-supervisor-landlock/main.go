// Command skillhost-supervisor-landlock is the Landlock plugin's run
// supervisor: skillhost-sandbox-landlock starts it for each run instead of
// re-executing itself (runner.WithSupervisor), because it links only the
// confiner and starts in a fraction of the plugin binary's time. It
// registers the same confiner, under the same name and options, as the
// plugin, so that the confine helper and the other roles it re-executes
// itself for find it too.
package main

import (
	"github.com/skillhost/skillhost/plugins/landlock/confiner"
	"github.com/skillhost/skillhost/shared/runner"
)

func main() { runner.SupervisorMain(confiner.Option()) }
