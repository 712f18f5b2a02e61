package pluginclient

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/skillhost/skillhost/shared"
)

// Binary name prefixes: a sandbox plugin is a file named
// skillhost-sandbox-NAME (BinaryPrefix, how hosts find it), and may have
// beside it a lean supervisor binary skillhost-supervisor-NAME and a
// binary serving only the one-shot fast path, skillhost-oneshot-NAME.
const (
	BinaryPrefix     = "skillhost-sandbox-"
	supervisorPrefix = "skillhost-supervisor-"
	oneShotPrefix    = "skillhost-oneshot-"
)

// CompanionPath is where the lean supervisor binary of the plugin at path
// would be ("" for a binary not named skillhost-sandbox-NAME).
func CompanionPath(path string) string { return besidePlugin(path, supervisorPrefix) }

// OneShotPath is where the plugin at path's binary for one-shot hosts
// would be ("" for a binary not named skillhost-sandbox-NAME): the same
// backend built without go-plugin (package kit), which a OneShot launch
// starts first when it is there.
func OneShotPath(path string) string { return besidePlugin(path, oneShotPrefix) }

// besidePlugin is the file named prefix+NAME beside the plugin
// skillhost-sandbox-NAME at path, or "".
func besidePlugin(path, prefix string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".exe")
	name, ok := strings.CutPrefix(base, BinaryPrefix)
	if !ok || name == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(path), prefix+name)
}

// OneShotBinary is the plugin at path's binary for one-shot hosts, if it
// is there as a regular file someone may execute, else "".
func OneShotBinary(path string) string {
	p := OneShotPath(path)
	if p == "" {
		return ""
	}
	if st, err := os.Stat(p); err != nil || !executable(st) {
		return ""
	}
	return p
}

// executable reports whether fi is a regular file someone may execute.
func executable(fi fs.FileInfo) bool { return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 }

// Companion opens the lean supervisor binary of the plugin at path
// (CompanionPath): nil and no error when there is none. It must be a
// regular file someone may execute (OpenExecutable).
func Companion(path string) (*os.File, error) {
	p := CompanionPath(path)
	if p == "" {
		return nil, nil
	}
	f, err := OpenExecutable(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// OpenExecutable opens the regular file at path, which someone may
// execute. It never waits: a FIFO in its place is refused, not opened.
func OpenExecutable(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !executable(st) {
		err = fmt.Errorf("%s is not an executable file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// passSupervisor hands cfg's supervisor binary to the plugin started by cmd.
func passSupervisor(cmd *exec.Cmd, cfg LaunchConfig) {
	// Only Linux's runner starts one (and takes the descriptor back from
	// the plugin's children); elsewhere it would reach every script.
	if cfg.Supervisor == nil || cfg.NoSupervisor || runtime.GOOS != "linux" {
		return
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", shared.EnvSupervisorFD, 3+len(cmd.ExtraFiles)))
	cmd.ExtraFiles = append(cmd.ExtraFiles, cfg.Supervisor)
}
