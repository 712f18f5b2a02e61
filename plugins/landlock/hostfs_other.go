//go:build !unix

package landlock

import "os"

func removeTree(path string) error { return os.RemoveAll(path) }

func sweepTemps() {}
