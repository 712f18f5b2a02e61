//go:build !linux

package landlock

import (
	"os"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
)

func detect() Features {
	return Features{Missing: "Landlock is a Linux feature", Uid: os.Geteuid()}
}

func nprocOf(int) int64 { return 0 }

type filterKey struct{ network, loopback, landlockUnix, noMetadata bool }

func seccompFilter(filterKey) (confiner.Filter, error) { return nil, nil }
