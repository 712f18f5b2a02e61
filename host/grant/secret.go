package grant

import (
	"path/filepath"
	"strings"
)

// secretNames are file and directory names that hold secrets.
var secretNames = []string{
	"shadow", "gshadow", "sudoers", ".netrc", ".pgpass", ".env", "credentials", ".git-credentials",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".ssh", ".gnupg", ".aws", ".kube", "private",
}

// LooksSecret reports whether path names a secret: one of secretNames, or
// under one, or a key file.
func LooksSecret(path string) bool {
	for _, part := range strings.Split(path, "/") {
		for _, s := range secretNames {
			if part == s || strings.HasPrefix(part, s+".") && strings.HasPrefix(s, "id_") {
				return true
			}
		}
	}
	base := strings.ToLower(filepath.Base(path))
	for _, ext := range []string{".pem", ".key", ".p12", ".pfx", ".keystore"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.Contains(base, "secret") || strings.Contains(base, "token")
}
