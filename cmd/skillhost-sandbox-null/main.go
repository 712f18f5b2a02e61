// Command skillhost-sandbox-null is the passthrough sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/oneshot"
)

func main() {
	oneshot.Serve(null.New()) // the one-shot fast path, when the host asks for it
	backend.Serve(null.New())
}
