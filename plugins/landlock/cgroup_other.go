//go:build !linux

package landlock

import "errors"

func limitCgroups(Limits) error { return errors.New("cgroups are a Linux feature") }

func sweepCgroups() {}

func cgroupNames() []string { return nil }
