//go:build !linux

package confiner

// Filter is an assembled seccomp program (Linux only).
type Filter []struct{}
