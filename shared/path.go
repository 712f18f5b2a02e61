package shared

import "strings"

// Under reports whether path equals root or lies beneath it on a component
// boundary: /tmp/x is under /tmp, /tmpfoo is not, and everything absolute
// is under /. Both must be clean absolute paths, as grant paths are.
func Under(path, root string) bool {
	if root == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == root || strings.HasPrefix(path, root+"/")
}

// UnderAny reports whether path is Under one of roots.
func UnderAny(path string, roots []string) bool {
	for _, r := range roots {
		if Under(path, r) {
			return true
		}
	}
	return false
}
