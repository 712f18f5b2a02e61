//go:build !linux

package landlock

import "errors"

func runCgroup(string, string, int64) (string, func(), error) {
	return "", nil, errors.New("cgroups are a Linux feature")
}
