// Command skillhost-sandbox-temporal is the fleet backend: started by
// skillhost, a sandbox plugin that sends each run to a Temporal task
// queue; started as `skillhost-sandbox-temporal worker ...`, a worker of
// that queue that runs each job under a local sandbox plugin.
package main

import (
	"os"

	"github.com/skillhost/skillhost/plugins/temporal"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(temporal.WorkerMain(os.Args[2:], os.Stderr))
	}
	backend.Serve(temporal.New())
}
