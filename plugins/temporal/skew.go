package temporal

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skillhost/skillhost/shared"
)

// minContract is the oldest contract version a worker serves: a job from
// a host before jobs carried one (Job.Contract 0) was of this version.
const minContract = 1

// skew says why worker name cannot serve job, whose host may run another
// release than the worker during a rolling upgrade; "" if it can. A
// worker serves the contract versions from minContract to its own, and
// hosts of its release or older: a newer host may send what this worker
// would not understand (gob drops fields it does not know, so a new
// limit of the grant would be silently lost), hence workers are upgraded
// first. Patch releases of a release are compatible both ways.
func skew(name string, job Job) string {
	contract := job.Contract
	if contract == 0 {
		contract = minContract
	}
	upgrade := "upgrade the workers first, then the hosts (docs/fleet.md, Upgrades)"
	if contract > shared.ContractVersion || contract < minContract {
		return fmt.Sprintf("worker %s (skillhost-worker %s) serves contract versions %d to %d and the host (%s) sent version %d; %s",
			name, Version, minContract, shared.ContractVersion, hostName(job), contract, upgrade)
	}
	if job.HostVersion == "" {
		return ""
	}
	hmaj, hmin, ok := majorMinor(job.HostVersion)
	if !ok {
		return fmt.Sprintf("worker %s cannot read the host's version %q; the host must be a skillhost release", name, job.HostVersion)
	}
	wmaj, wmin, _ := majorMinor(Version)
	if hmaj > wmaj || hmaj == wmaj && hmin > wmin {
		return fmt.Sprintf("worker %s runs skillhost-worker %s, older than the host (%s), whose jobs it may not understand; %s",
			name, Version, hostName(job), upgrade)
	}
	return ""
}

// hostName is how a refusal names the job's host.
func hostName(job Job) string {
	if job.HostVersion == "" {
		return "a release before 0.1.0"
	}
	return "skillhost-temporal " + job.HostVersion
}

// majorMinor reads the major and minor numbers of a semantic version
// ("1.2.3", "v1.2.3-rc.1").
func majorMinor(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil && major >= 0 && minor >= 0
}
