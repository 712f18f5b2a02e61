//go:build !linux

package procstat

import "errors"

// Read is not available here.
func Read(int) (Stat, error) { return Stat{}, errors.ErrUnsupported }
