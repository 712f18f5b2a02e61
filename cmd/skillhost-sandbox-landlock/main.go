// Command skillhost-sandbox-landlock is the Linux sandbox plugin.
package main

import (
	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared"
)

func main() { shared.Serve(landlock.New()) }
