package temporal

import (
	"strconv"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// A worker serves jobs of its contract and release or older ones, and
// refuses newer ones before running anything, saying to upgrade workers
// first.
func TestSkew(t *testing.T) {
	maj, min, _ := majorMinor(Version)
	newerMinor := strings.Join([]string{itoa(maj), itoa(min + 1), "0"}, ".")
	for _, tc := range []struct {
		name     string
		contract int
		host     string
		want     string // "" serves
	}{
		{"same release", shared.ContractVersion, Version, ""},
		{"a host before versions were carried", 0, "", ""},
		{"an older host", shared.ContractVersion, "0.0.9", ""},
		{"a newer patch", shared.ContractVersion, itoa(maj) + "." + itoa(min) + ".99", ""},
		{"a newer contract", shared.ContractVersion + 1, newerMinor, "serves contract versions 1 to " + itoa(shared.ContractVersion) + " and the host (skillhost-temporal " + newerMinor + ") sent version " + itoa(shared.ContractVersion+1) + "; upgrade the workers first"},
		{"a newer release", shared.ContractVersion, newerMinor, "runs skillhost-worker " + Version + ", older than the host (skillhost-temporal " + newerMinor + "), whose jobs it may not understand; upgrade the workers first"},
		{"a newer major", shared.ContractVersion, itoa(maj+1) + ".0.0", "older than the host"},
		{"a contract below any", -1, Version, "sent version -1"},
		{"no version at all", shared.ContractVersion, "main", `cannot read the host's version "main"`},
	} {
		got := skew("w1", Job{Contract: tc.contract, HostVersion: tc.host})
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
