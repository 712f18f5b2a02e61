//go:build !linux

package host

import (
	"os"
	"runtime"
)

func detectPlatform(p *Platform) {
	if runtime.GOOS == "darwin" {
		if _, err := os.Stat("/usr/bin/sandbox-exec"); err == nil {
			p.Features["sandbox-exec"] = "present (deprecated by Apple, still shipped)"
		} else {
			p.Features["sandbox-exec"] = "missing"
		}
	}
}
