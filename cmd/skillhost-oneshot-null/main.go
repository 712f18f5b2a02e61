// Command skillhost-oneshot-null is the passthrough sandbox plugin for a
// host that makes one call (`skillhost run`): the same backend as
// skillhost-sandbox-null, serving only the one-shot fast path, so it links
// no go-plugin and starts in less time. Such a host starts it when it is
// beside the plugin (docs/plugins.md).
package main

import (
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/backend/kit"
)

func main() {
	impl := null.New()
	// Its calls wait on the run's supervisor and pipes.
	kit.UseOneProcessor()
	kit.ServeFastPath(impl)
}
