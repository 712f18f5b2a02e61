// Command skillhost-sandbox-null is the passthrough sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/null"
	"github.com/skillhost/skillhost/shared/backend"
)

func main() {
	backend.Serve(null.New())
}
