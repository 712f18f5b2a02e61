//go:build !linux

package landlock

import (
	"errors"

	"github.com/skillhost/skillhost/shared/runner"
)

func limitCgroups(Limits) error { return errors.New("cgroups are a Linux feature") }

func sweepCgroups() {}

func cgroupNames() []string { return nil }

// confinement is nothing here: the confiner is Linux's.
func confinement() runner.Option { return func(*runner.Runner) {} }
