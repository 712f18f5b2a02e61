//go:build unix

package pluginclient

import (
	"os"
	"syscall"
)

// giveTo makes dir owned by the user a plugin runs as, if attr names one.
func giveTo(dir string, attr *syscall.SysProcAttr) error {
	if attr == nil || attr.Credential == nil {
		return nil
	}
	return os.Chown(dir, int(attr.Credential.Uid), int(attr.Credential.Gid))
}
