// Command skillhost-sandbox-seatbelt is the macOS sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/seatbelt"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	backend.Serve(seatbelt.New())
}
