package archtest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavy are what a plugin binary links for the plugin protocol and the
// egress proxy, and gob (which the supervisor's spec and the confiner's
// policy replaced with package frame): their initialisers and page faults
// are what a supervisor started for every run must not pay for.
var heavy = []string{
	"encoding/gob",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"github.com/hashicorp/go-plugin",
	"github.com/hashicorp/go-hclog",
	"github.com/elazarl/goproxy",
	module + "shared/backend",
	module + "shared/egress",
}

// The Landlock confiner and the lean supervisor binaries link none of the
// heavy packages, on Linux, where they run.
func TestLeanSupervisorLinksNoPluginProtocol(t *testing.T) {
	for _, pkg := range []string{"../../plugins/landlock/confiner", "../../cmd/skillhost-supervisor-landlock", "../../cmd/skillhost-supervisor-null", "../../cmd/skillhost-supervisor-none"} {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Env = append(os.Environ(), "GOOS=linux")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		ds := strings.Fields(string(out))
		if !slices.Contains(ds, module+"shared/runner") {
			t.Fatalf("go list -deps %s does not list the runner: %q", pkg, ds)
		}
		for _, h := range heavy {
			if i := slices.IndexFunc(ds, func(d string) bool { return d == h || strings.HasPrefix(d, h+"/") }); i >= 0 {
				t.Errorf("%s depends on %s: a run's supervisor must start without the plugin protocol, the egress proxy or gob", strings.TrimPrefix(pkg, "../../"), ds[i])
			}
		}
	}
}
