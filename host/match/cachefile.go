package match

import (
	"os"
	"path/filepath"
)

// writeCacheFile writes data to path, creating its directory (0700), by
// way of a temporary file ".NAME-*" beside it renamed into place: a
// concurrent reader sees the old file or the new one, never half of one.
func writeCacheFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
