//go:build !unix

package confiner

import "os"

// MkdirNoFollow makes path and its missing parents.
func MkdirNoFollow(path string) error { return os.MkdirAll(path, 0o755) }
