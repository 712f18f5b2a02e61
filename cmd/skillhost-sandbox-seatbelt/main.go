// Command skillhost-sandbox-seatbelt is the macOS sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/seatbelt"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/oneshot"
)

func main() {
	oneshot.Serve(seatbelt.New()) // the one-shot fast path, when the host asks for it
	backend.Serve(seatbelt.New())
}
