//go:build !unix

package host

const syscallNonblock = 0
