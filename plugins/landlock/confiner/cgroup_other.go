//go:build !linux

package confiner

import (
	"errors"

	"github.com/skillhost/skillhost/shared/runner"
)

func limitCgroups(Limits) error { return errors.New("cgroups are a Linux feature") }

// SweepCgroups does nothing here: cgroups are Linux's.
func SweepCgroups() {}

// CgroupNames is empty here: cgroups are Linux's.
func CgroupNames() []string { return nil }

// Option is nothing here: the confiner is Linux's.
func Option() runner.Option { return func(*runner.Runner) {} }
