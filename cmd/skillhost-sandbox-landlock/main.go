// Command skillhost-sandbox-landlock is the Linux sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/oneshot"
)

func main() {
	oneshot.Serve(landlock.New()) // the one-shot fast path, when the host asks for it
	backend.Serve(landlock.New())
}
