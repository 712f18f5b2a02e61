package landlock

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/skillhost/skillhost/plugins/landlock/seccomppolicy"
)

// The table the plugin runs on x86-64 (-update rewrites it) is the policy's assembly, byte for
// byte, and filterKey numbers kinds of run as seccomppolicy does.
func TestSeccompFilterTable(t *testing.T) {
	const file = "zseccomp_linux_amd64.go"
	if runtime.GOARCH != "amd64" {
		t.Skipf("the table is for amd64; on %s the plugin assembles the policy at run time", runtime.GOARCH)
	}
	for _, k := range seccomppolicy.Keys() {
		fk := filterKey{network: k.Network, loopback: k.Loopback, landlockUnix: k.LandlockUnix, noMetadata: k.NoMetadata}
		if fk.index() != k.Index() {
			t.Fatalf("filterKey %+v has index %d, seccomppolicy's %+v %d", fk, fk.index(), k, k.Index())
		}
		want, err := seccomppolicy.Filter(k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := seccompFilter(fk)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%+v: the plugin's filter has %d instructions, the policy's %d (go test -run TestSeccompFilterTable -update)", k, len(got), len(want))
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%+v: instruction %d is %+v, the policy's %+v (go test -run TestSeccompFilterTable -update)", k, i, got[i], want[i])
				break
			}
		}
	}
	src, err := seccomppolicy.Table("landlock", "seccompFilters")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if old, err := os.ReadFile(file); err != nil || !bytes.Equal(old, src) {
		t.Errorf("%s is not what package seccomppolicy writes (%v); go test -run TestSeccompFilterTable -update", file, err)
	}
}
