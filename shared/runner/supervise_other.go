//go:build !linux

package runner

import (
	"errors"
	"os"
)

// Supervision needs a child subreaper, which only Linux has. Elsewhere Run
// bounds a command by its process group.

func supervisionSupported() bool { return false }

func superviseMain() int { return 2 }

func confineMain() int {
	os.Stderr.WriteString("runner: confine helper is only available on Linux\n")
	return 126
}

type pool struct{}

func (pool) drop() {}

func (*Runner) startSupervised(Spec) (process, error) {
	return nil, errors.New("runner: supervision is only available on Linux")
}
