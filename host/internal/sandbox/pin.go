package sandbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// ChecksumError is a pinned plugin whose binary changed.
type ChecksumError struct {
	Name, Path       string
	Expected, Actual string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("sandbox plugin %q at %s does not match its pinned SHA-256: expected %s, actual %s "+
		"(reinstall the plugin you pinned, or run `skillhost plugins pin` if this binary is the one you trust)",
		e.Name, e.Path, e.Expected, e.Actual)
}

// Sum returns the hex SHA-256 of the file at path.
func Sum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verify checks a candidate against its pin, if there is one.
func verify(c Candidate, pins map[string]string) error {
	want, ok := pins[c.Name]
	if !ok {
		return nil
	}
	got, err := Sum(c.Path)
	if err != nil {
		return fmt.Errorf("sandbox plugin %q at %s: %w", c.Name, c.Path, err)
	}
	if !PinMatches(want, got) {
		return &ChecksumError{Name: c.Name, Path: c.Path, Expected: strings.ToLower(want), Actual: got}
	}
	return nil
}

// PinMatches reports whether a pinned SHA-256 (hex, any case) is sum.
func PinMatches(pin, sum string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(pin)), []byte(sum)) == 1
}
