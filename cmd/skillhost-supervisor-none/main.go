// Command skillhost-supervisor-none is the run supervisor of the host's
// own unconfined strategy (none): a lean binary skillhost starts for each
// run instead of re-executing itself (see runner.WithSupervisor). It holds
// only the runner.
package main

import "github.com/skillhost/skillhost/shared/runner"

func main() { runner.SupervisorMain() }
