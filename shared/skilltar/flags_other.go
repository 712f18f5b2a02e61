//go:build !unix

package skilltar

const openFlags = 0
