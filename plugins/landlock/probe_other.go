//go:build !linux

package landlock

import "os"

func detect() Features {
	return Features{Missing: "Landlock is a Linux feature", Uid: os.Geteuid()}
}

func nprocOf(int) int64 { return 0 }

// Filter is an assembled seccomp program (Linux only).
type Filter []struct{}

type filterKey struct{ network, loopback, landlockUnix, noMetadata bool }

func seccompFilter(filterKey) (Filter, error) { return nil, nil }
