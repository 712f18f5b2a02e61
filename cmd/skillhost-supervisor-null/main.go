// Command skillhost-supervisor-null is the null plugin's run supervisor: a
// lean binary the plugin starts for each run instead of re-executing
// itself (see runner.WithSupervisor). It holds only the runner.
package main

import "github.com/skillhost/skillhost/shared/runner"

func main() { runner.SupervisorMain() }
