//go:build !linux

package runner

import "errors"

// openSupervisor: there is no supervisor to start off Linux.
func openSupervisor(int) (*supervisorExe, error) {
	return nil, errors.New("supervisor binary: supervision is only available on Linux")
}

func inheritedSupervisor() *supervisorExe { return nil }

type supervisorStat struct{}
