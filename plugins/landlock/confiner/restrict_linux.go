package confiner

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// abiConfigs is go-landlock's table of what each ABI handles, by version.
var abiConfigs = []landlock.Config{
	{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// abiConfig returns what ABI abi handles; an ABI newer than go-landlock
// knows is treated as the newest it knows.
func abiConfig(abi int) landlock.Config {
	if abi >= len(abiConfigs) {
		abi = len(abiConfigs) - 1
	}
	if abi < 0 {
		abi = 0
	}
	return abiConfigs[abi]
}

// fsRights returns every filesystem right the ABI knows, so everything not
// granted is denied.
func fsRights(abi int) uint64 { return uint64(abiConfig(abi).HandledAccessFS) }

// Rights of each kind of rule, before masking with what the ABI handles.
const (
	roFileRights = ll.AccessFSExecute | ll.AccessFSReadFile
	roDirRights  = roFileRights | ll.AccessFSReadDir
	rwFileRights = roFileRights | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// restrict applies the Landlock part of the policy to the calling thread
// only: file rules, TCP rules when the network is off, and signal and
// abstract-socket scopes. In an isolated helper the process's main thread,
// the namespace's init, stays outside the domain, which keeps the script
// from signalling or tracing it.
func restrict(p Policy, hs handles) error {
	handled := fsRights(p.ABI)
	attr := ll.RulesetAttr{HandledAccessFS: handled}
	if !p.Network && p.ABI >= 4 {
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	if p.ABI >= 6 {
		attr.Scoped = ll.ScopeAbstractUnixSocket | ll.ScopeSignal
	}
	rfd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("create ruleset: %w", err)
	}
	defer unix.Close(rfd)
	rwDir := handled // renames, links and Unix sockets within writable trees too
	add := func(paths []string, dirRights, fileRights uint64) error {
		for _, path := range paths {
			fd, owned, err := hs.fd(path)
			if errors.Is(err, unix.ENOENT) {
				continue // Landlock can only grant what exists
			}
			if err != nil {
				return fmt.Errorf("open %s: %w", path, err)
			}
			var st unix.Stat_t
			err = unix.Fstat(fd, &st)
			rights := fileRights
			if err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				rights = dirRights
			}
			if err == nil {
				err = ll.LandlockAddPathBeneathRule(rfd, &ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: rights & handled}, 0)
			}
			if owned {
				unix.Close(fd)
			}
			if err != nil {
				return fmt.Errorf("rule for %s: %w", path, err)
			}
		}
		return nil
	}
	var private []string
	if p.View != nil {
		private = []string{ViewTmp} // the view's own tmpfs, opened by name inside it
	}
	for _, r := range []struct {
		paths            []string
		dirRights, files uint64
	}{
		{private, rwDir, rwFileRights},
		{p.RODirs, roDirRights, roFileRights},
		{p.ROFiles, roFileRights, roFileRights},
		{p.RWDirs, rwDir, rwFileRights},
		{p.RWFiles, rwFileRights, rwFileRights},
	} {
		if err := add(r.paths, r.dirRights, r.files); err != nil {
			return err
		}
	}
	if p.Egress != nil && p.ABI >= 4 {
		// The one TCP connection a run by name may make: to its own
		// loopback's relay port (nothing else exists in its namespace).
		if err := ll.LandlockAddNetPortRule(rfd, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(p.Egress.Port)}, 0); err != nil {
			return fmt.Errorf("rule for the egress port: %w", err)
		}
	}
	return ll.LandlockRestrictSelf(rfd, 0)
}
