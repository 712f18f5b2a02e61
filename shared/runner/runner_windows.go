package runner

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Package runner needs process groups and POSIX signals; on Windows it
// builds (so every binary of the project does) but runs nothing.

var errWindows = errors.New("running commands needs a Unix system (process groups and signals)")

func startDirect(Spec) (process, error) { return nil, errWindows }

func killGroup(int, syscall.Signal) {}

// SignalName returns "signal N": Windows has no POSIX signal names.
func SignalName(sig syscall.Signal) string { return "signal " + strconv.Itoa(int(sig)) }

func readBuffered(*os.File, []byte, func([]byte)) {}
