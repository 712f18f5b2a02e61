// Command skillhost-sandbox-null is the passthrough sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	// Its calls wait on the run's supervisor and pipes.
	backend.Serve(null.New(), backend.WithOneProcessor())
}
