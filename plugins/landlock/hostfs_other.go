//go:build !unix

package landlock

import "os"

func mkdirNoFollow(path string) error { return os.MkdirAll(path, 0o755) }

func removeTree(path string) error { return os.RemoveAll(path) }

func sweepTemps() {}
