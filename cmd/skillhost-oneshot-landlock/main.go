// Command skillhost-oneshot-landlock is the Linux sandbox plugin for a host
// that makes one call (`skillhost run`): the same backend as
// skillhost-sandbox-landlock, serving only the one-shot fast path, so it
// links no go-plugin and no egress proxy, and starts in less time. Such a
// host starts it when it is beside the plugin, for a run that does not
// name hosts (docs/plugins.md).
package main

import (
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared/backend/kit"
)

func main() {
	impl := landlock.New()
	// Its calls wait on the run's supervisor and pipes.
	kit.UseOneProcessor()
	kit.ServeFastPath(impl)
}
