//go:build !linux

package runner

// awaitExit is a no-op where waitid(WNOWAIT) is not available: the group
// is then killed after the leader is reaped.
func awaitExit(int) {}
