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
		ds := linuxDeps(t, pkg)
		if !slices.Contains(ds, module+"shared/runner") {
			t.Fatalf("go list -deps %s does not list the runner: %q", pkg, ds)
		}
		for _, d := range among(ds, heavy) {
			t.Errorf("%s depends on %s: a run's supervisor must start without the plugin protocol, the egress proxy or gob", strings.TrimPrefix(pkg, "../../"), d)
		}
	}
}

// among is the first of deps that is one of pkgs or inside one, for each
// of pkgs that has one.
func among(deps, pkgs []string) []string {
	var found []string
	for _, p := range pkgs {
		if i := slices.IndexFunc(deps, func(d string) bool { return d == p || strings.HasPrefix(d, p+"/") }); i >= 0 {
			found = append(found, deps[i])
		}
	}
	return found
}

// linuxDeps is what pkg links on Linux (go list -deps), with env added to
// go's environment.
func linuxDeps(t *testing.T, pkg string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Env = append(append(os.Environ(), "GOOS=linux"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

// goPluginOnly are what serving over go-plugin links and the one-shot fast
// path never uses: go-plugin (its net/rpc brings gob, its gRPC reflection
// service protobuf's descriptors) and package backend, whose Serve is
// go-plugin's.
var goPluginOnly = []string{
	"github.com/hashicorp/go-plugin",
	"encoding/gob",
	"net/rpc",
	"google.golang.org/grpc/reflection",
	module + "shared/internal/pluginset",
}

// The binaries for one-shot hosts, and the backends they are built from,
// link no go-plugin: their start is what a one-shot run pays.
func TestOneShotBinariesLinkNoGoPlugin(t *testing.T) {
	for _, pkg := range []string{"../../cmd/skillhost-oneshot-landlock", "../../cmd/skillhost-oneshot-null", "../../plugins/landlock", "../../plugins/null"} {
		ds := linuxDeps(t, pkg)
		if !slices.Contains(ds, module+"shared/backend/kit") {
			t.Fatalf("go list -deps %s does not list package kit: %q", pkg, ds)
		}
		if slices.Contains(ds, module+"shared/backend") {
			t.Errorf("%s depends on package backend: its Serve links go-plugin; use package kit", strings.TrimPrefix(pkg, "../../"))
		}
		for _, d := range among(ds, goPluginOnly) {
			t.Errorf("%s depends on %s, which only serving over go-plugin needs", strings.TrimPrefix(pkg, "../../"), d)
		}
	}
}

// The Landlock binary for one-shot hosts has no egress proxy (a one-shot
// host starts the plugin binary for a run by name): goproxy, its CA key
// and go-socks5 were a fifth of its start.
func TestOneShotLandlockLinksNoProxy(t *testing.T) {
	ds := linuxDeps(t, "../../cmd/skillhost-oneshot-landlock")
	for _, d := range among(ds, []string{"github.com/elazarl/goproxy", "github.com/things-go/go-socks5", module + "shared/egress"}) {
		t.Errorf("cmd/skillhost-oneshot-landlock depends on %s; the egress proxy belongs to the plugin binary (landlock.WithEgressProxy)", d)
	}
	if !slices.Contains(linuxDeps(t, "../../cmd/skillhost-sandbox-landlock"), module+"shared/egress/proxy") {
		t.Error("cmd/skillhost-sandbox-landlock does not link the egress proxy: runs by name would be refused")
	}
}

// On x86-64 the Landlock binaries run seccomp filters from a table written
// ahead of time, and link neither the assembler nor its system call tables,
// whose initialiser every run paid.
func TestLandlockLinksNoSeccompAssembler(t *testing.T) {
	for _, pkg := range []string{"../../cmd/skillhost-oneshot-landlock", "../../cmd/skillhost-sandbox-landlock"} {
		ds := linuxDeps(t, pkg, "GOARCH=amd64")
		if !slices.Contains(ds, module+"plugins/landlock/confiner") {
			t.Fatalf("go list -deps %s does not list the confiner: %q", pkg, ds)
		}
		for _, d := range among(ds, []string{"github.com/elastic/go-seccomp-bpf", module + "plugins/landlock/seccomppolicy"}) {
			t.Errorf("%s depends on %s on amd64; its filters come from zseccomp_linux_amd64.go", strings.TrimPrefix(pkg, "../../"), d)
		}
	}
}
