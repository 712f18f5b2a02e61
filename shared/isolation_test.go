package shared_test

import (
	"encoding/json"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// A declaration says, per grant, whether the run has the namespace of its
// own: network by name keeps a private network namespace, the whole
// network does not.
func TestNamespaceFor(t *testing.T) {
	open := shared.Grant{Network: true}
	byName := shared.Grant{Network: true, Egress: &shared.Egress{Allow: []string{"example.com"}}}
	for _, c := range []struct {
		ns                    shared.Namespace
		none, byName, network bool
	}{
		{shared.Shared, false, false, false},
		{shared.Private, true, true, true},
		{shared.PrivateUnlessNetwork, true, true, false},
	} {
		if got := [3]bool{c.ns.For(shared.Grant{}), c.ns.For(byName), c.ns.For(open)}; got != [3]bool{c.none, c.byName, c.network} {
			t.Errorf("%v.For(no network, by name, whole network) = %v", c.ns, got)
		}
	}
}

// Info's isolation reads and writes by name, and an unknown name is an
// error naming the accepted ones.
func TestIsolationJSON(t *testing.T) {
	in := shared.Isolation{Network: shared.PrivateUnlessNetwork, PID: shared.Private}
	b, err := json.Marshal(in)
	if err != nil || string(b) != `{"network":"private_unless_network","pid":"private"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var out shared.Isolation
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("Unmarshal = %+v, %v; want %+v", out, err, in)
	}
	if err := json.Unmarshal([]byte(`{"ipc":"own"}`), &out); err == nil {
		t.Error(`"own" accepted as a namespace declaration`)
	}
}
