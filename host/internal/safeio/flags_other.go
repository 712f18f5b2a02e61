//go:build !unix

package safeio

const (
	nonblock = 0
	nofollow = 0
)
