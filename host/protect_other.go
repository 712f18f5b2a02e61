//go:build !linux

package host

import (
	"errors"
	"os"
)

func moveAside(path, run string) (string, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	to := path + ".skillhost-blocked-" + run
	return to, os.Rename(path, to)
}
