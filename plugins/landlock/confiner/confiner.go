// Package confiner is the part of the Landlock backend that runs in a run's
// supervisor (or confine helper): it decodes the Policy the plugin built and
// applies it, for good, to the thread the script is started from (cgroup
// and resource limits, the filesystem view, the network namespace and the
// egress route, capabilities, Landlock, seccomp). It also moves the
// supervisor into its run cgroups ahead of time and sweeps the cgroups of
// runs that are gone.
//
// It links neither the plugin protocol (go-plugin, gRPC, protobuf) nor the
// egress proxy, so a supervisor binary built on it alone
// (cmd/skillhost-supervisor-landlock) starts in a fraction of the plugin
// binary's time; internal/archtest keeps it so.
package confiner

// Name is the name the confiner is registered under (Option) and that a
// run's Spec.Confine asks for.
const Name = "landlock"

// RemedyNoNamespaces is what to do where the run's filesystem view cannot
// be built: the plugin's refusals and the confiner's errors end with it.
const RemedyNoNamespaces = "run skillhost as root or where user namespaces are allowed (sysctl user.max_user_namespaces > 0), " +
	"or set plugins.config.landlock.landlock_only: true to run with Landlock and seccomp alone (no filesystem view: " +
	"metadata, links and extended attributes of paths outside the grant stay visible)"
