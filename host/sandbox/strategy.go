package sandbox

// The built-in strategies.
const (
	Null     = "null"
	Landlock = "landlock"
	Seatbelt = "seatbelt"
	Auto     = "auto"
)

// AutoFor returns the plugin "auto" picks on goos: Seatbelt on macOS,
// Landlock on Linux, and null elsewhere, where confine is false because
// nothing confines the scripts.
func AutoFor(goos string) (name string, confine bool) {
	switch goos {
	case "darwin":
		return Seatbelt, true
	case "linux":
		return Landlock, true
	}
	return Null, false
}
