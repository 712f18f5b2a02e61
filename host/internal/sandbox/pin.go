package sandbox

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skillhost/skillhost/shared/pluginclient"
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
	return sumOf(f)
}

func sumOf(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// SupervisorPin is the suffix of the pin of a plugin's lean supervisor
// binary (skillhost-supervisor-NAME beside it): its key is NAME followed
// by this.
const SupervisorPin = "/supervisor"

// Sums returns what pinning c records: the SHA-256 of its binary under its
// name and, if it has a lean supervisor binary, that binary's under
// c.Name+SupervisorPin.
func Sums(c Candidate) (map[string]string, error) {
	sum, err := Sum(c.Path)
	if err != nil {
		return nil, err
	}
	sums := map[string]string{c.Name: sum}
	f, err := pluginclient.Companion(c.Path)
	if err != nil {
		return nil, fmt.Errorf("sandbox plugin %q: supervisor binary: %w", c.Name, err)
	}
	if f != nil {
		defer f.Close()
		if sums[c.Name+SupervisorPin], err = sumOf(f); err != nil {
			return nil, fmt.Errorf("sandbox plugin %q: supervisor binary: %w", c.Name, err)
		}
	}
	return sums, nil
}

// SupervisorPath is where c's lean supervisor binary would be.
func SupervisorPath(c Candidate) string { return pluginclient.CompanionPath(c.Path) }

// supervisorFor is the lean supervisor binary of plugin c, open and
// checked against its pin (NAME/supervisor) when it has one. Without
// either pin it is nil and use true: the launch finds the binary itself.
// A pinned plugin whose supervisor binary has no pin does not use it (use
// is false): its runs re-execute the plugin binary, which the pin covers.
// A supervisor binary that does not match its pin is refused, whether or
// not the plugin has one.
func supervisorFor(c Candidate, pins map[string]string) (f *os.File, use bool, err error) {
	want, supPinned := pins[c.Name+SupervisorPin]
	_, pinned := pins[c.Name]
	if !pinned && !supPinned {
		return nil, true, nil
	}
	if !supPinned {
		return nil, false, nil
	}
	f, err = pluginclient.Companion(c.Path)
	if err != nil || f == nil {
		return nil, false, nil
	}
	got, err := sumOf(f)
	if err == nil && !PinMatches(want, got) {
		err = &ChecksumError{Name: c.Name + SupervisorPin, Path: pluginclient.CompanionPath(c.Path), Expected: strings.ToLower(want), Actual: got}
	}
	if err != nil {
		f.Close()
		return nil, false, err
	}
	return f, true, nil
}

// OneShotBinary is c's binary for one-shot hosts, if it lies beside c,
// and whether a one-shot host starts it (not when c is pinned).
func OneShotBinary(c Candidate, pins map[string]string) (path string, used bool) {
	path = pluginclient.OneShotBinary(c.Path)
	return path, path != "" && !pinnedAtAll(c, pins)
}

// pinnedAtAll reports whether c or its supervisor binary has a pin.
func pinnedAtAll(c Candidate, pins map[string]string) bool {
	_, pinned := pins[c.Name]
	_, supPinned := pins[c.Name+SupervisorPin]
	return pinned || supPinned
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
