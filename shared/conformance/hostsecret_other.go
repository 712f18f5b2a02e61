//go:build !unix

package conformance

// WithHostSecret does nothing where the escape suite does not run.
func WithHostSecret() {}
