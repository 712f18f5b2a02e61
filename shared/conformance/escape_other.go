//go:build unix && !linux

package conformance

import "testing"

// Escapes needs Linux (credentials, /proc); elsewhere it skips.
func Escapes(t *testing.T, _ EscapeConfig) { t.Skip("the escape suite runs on Linux") }

// Teardown needs Linux; elsewhere it skips.
func Teardown(t *testing.T, _ EscapeConfig, _ int) { t.Skip("the escape suite runs on Linux") }
