package conformance

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// Which attacks a declared namespace keeps inside the run is a security
// decision: this list changes only on purpose. Every other attack is
// judged the same whatever a backend declares.
var wantInsideOnly = map[string]string{
	"netlink socket (ip addr)":                "network",
	"lower the supervisor's limits (prlimit)": "pid",
	"signal the parent":                       "pid",
	"ptrace the parent":                       "pid",
	"list the mount table (listmount)":        "mount",
	"join the supervisor's process group":     "pid",
}

// A backend that shares every namespace, as the zero Isolation declares,
// loses no attack; one that declares them all private skips exactly the
// inside-only ones, naming the declaration; a network namespace kept only
// without the network still counts for a run granted the whole network.
func TestInsideOnlyFollowsTheDeclaration(t *testing.T) {
	all := shared.Isolation{Network: shared.Private, IPC: shared.Private, PID: shared.Private, Mount: shared.Private, User: shared.Private}
	got := map[string]string{}
	for _, a := range attacks {
		if why := (&world{name: "b"}).insideOnly(a); why != "" {
			t.Errorf("%s: skipped for a backend that shares every namespace: %s", a.name, why)
		}
		why := (&world{name: "b", isolation: all}).insideOnly(a)
		if (why != "") != (a.inside != nil) {
			t.Errorf("%s: inside-only %v, but skipped with %q", a.name, a.inside != nil, why)
		}
		if a.inside != nil {
			got[a.name] = a.inside.name
			if !strings.Contains(why, "Info.Isolation "+a.inside.name+" namespace private") {
				t.Errorf("%s: the reason does not name the declaration: %q", a.name, why)
			}
		}
	}
	for name, ns := range wantInsideOnly {
		if got[name] != ns {
			t.Errorf("%s: inside-only for %q, want %q", name, got[name], ns)
		}
	}
	for name := range got {
		if _, ok := wantInsideOnly[name]; !ok {
			t.Errorf("%s: newly inside-only; add it to wantInsideOnly only after judging that its effect cannot leave the namespace", name)
		}
	}

	netlink := attacks[slices.IndexFunc(attacks, func(a attack) bool { return a.name == "netlink socket (ip addr)" })]
	unlessNetwork := &world{name: "b", isolation: shared.Isolation{Network: shared.PrivateUnlessNetwork}}
	if unlessNetwork.insideOnly(netlink) == "" {
		t.Error("netlink: not skipped for a run without network in a namespace of its own")
	}
	netlink.prepare = func(_ *world, r *shared.Request) { r.Grant.Network = true }
	if why := unlessNetwork.insideOnly(netlink); why != "" {
		t.Errorf("netlink with the network granted: skipped (%s), though the run shares the host's network", why)
	}
}
