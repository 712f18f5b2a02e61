// Command skillhost-sandbox-seatbelt is the macOS sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/seatbelt"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	// Its calls wait on the run's supervisor and pipes.
	backend.Serve(seatbelt.New(), backend.WithOneProcessor())
}
