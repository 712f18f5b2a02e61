//go:build !linux

package landlock

import "errors"

func limitProcesses(int64) error { return errors.New("cgroups are a Linux feature") }

func sweepCgroups(string) {}
