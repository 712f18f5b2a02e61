package seatbelt

import (
	"path/filepath"
	"strings"
)

// macAliases are the top-level symlinks of macOS. Seatbelt matches the
// resolved path, so a rule for /tmp/x would match nothing: every path is
// rewritten to its /private form first, on any OS, because the profile is
// for macOS.
var macAliases = []string{"/tmp", "/var", "/etc"}

func alias(p string) string {
	for _, a := range macAliases {
		if p == a || strings.HasPrefix(p, a+"/") {
			return "/private" + p
		}
	}
	return p
}

// Canonical returns path as Seatbelt sees it: cleaned, with the macOS
// aliases expanded and symlinks resolved through the deepest existing
// ancestor (the rest, not created yet, is appended as written).
func Canonical(path string) string {
	return canonicalWith(path, filepath.EvalSymlinks)
}

func canonicalWith(path string, evalSymlinks func(string) (string, error)) string {
	p := alias(filepath.Clean(path))
	dir, rest := p, ""
	for {
		if real, err := evalSymlinks(dir); err == nil {
			return alias(filepath.Join(real, rest))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
