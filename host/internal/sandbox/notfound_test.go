package sandbox

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// The hint for a plugin not found names where to say where plugins are:
// plugins.dirs, and Options.PluginDirs for an embedding program (issue 35).
func TestNotFoundNamesPluginDirs(t *testing.T) {
	msg := (&NotFoundError{Name: "landlock", Dirs: []string{"/opt/x"}}).Error()
	for _, want := range []string{"plugins.dirs", "host.Options.PluginDirs", "/opt/x"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}

// A fleet that cannot take runs is no reason to run unconfined here: its
// hint never suggests sandbox.enabled: false.
func TestUnsupportedRemoteHint(t *testing.T) {
	local := (&UnsupportedError{Name: "landlock", Path: "/p", Probe: shared.Probe{Status: shared.Unsupported, Reason: "no landlock"}}).Error()
	remote := (&UnsupportedError{Name: "temporal", Path: "/p", Probe: shared.Probe{Status: shared.Unhealthy, Reason: "cluster down"}, Remote: true}).Error()
	if !strings.Contains(local, "sandbox.enabled: false") {
		t.Errorf("local hint lost its remedy: %s", local)
	}
	if strings.Contains(remote, "sandbox.enabled") || !strings.Contains(remote, "cluster") {
		t.Errorf("remote hint: %s", remote)
	}
}
