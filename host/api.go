package host

import "github.com/skillhost/skillhost/host/internal/sandbox"

// Init must be called first thing in main (or TestMain) by a program that
// runs scripts in-process (sandbox.enabled: false, --strategy none). When
// the program was started as the supervisor of such a script, Init does
// that job and exits the process; otherwise it returns at once and later
// runs are supervised where the platform supports it.
func Init() { sandbox.Init() }
