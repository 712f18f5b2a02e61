// Command skillhost-sandbox-landlock is the Linux sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/plugins/landlock/egressproxy"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	// Its calls wait on the run's supervisor and pipes.
	backend.Serve(landlock.New(landlock.WithEgressProxy(egressproxy.Start)), backend.WithOneProcessor())
}
