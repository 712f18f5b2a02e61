// Package runner runs one untrusted command to completion under hard bounds:
// a deadline that covers the whole process lifetime, an output cap, and the
// guarantee that no descendant of the command survives the run.
//
// Every sandbox plugin uses it, and so does the skillhost host when the
// sandbox is disabled, so all strategies share one set of semantics:
//
//   - The command runs in a new process group with stdin on /dev/null and
//     stdout and stderr merged into one pipe, so output arrives in the order
//     it was written.
//   - At the deadline the whole group receives SIGTERM; after
//     [Spec.KillGrace] everything still alive is killed with SIGKILL. A
//     command that closes its output and sleeps, or ignores SIGTERM, is
//     still stopped on time.
//   - When the command exits, every process it left behind is killed.
//   - Output beyond [Spec.OutputLimit] is drained and dropped, and a
//     visible marker is emitted once; what was written before a timeout is
//     kept.
//
// # Supervision
//
// A process group does not contain a descendant that calls setsid(2). On
// Linux the runner therefore interposes a small supervisor: the calling
// binary re-executed in a private mode. The supervisor marks itself a child
// subreaper, so every orphaned descendant is re-parented to it, and kills the
// whole tree when the command exits, when the deadline passes, or when the
// process that started it dies. A binary opts in by calling [Init] first
// thing in main (plugins do this through backend.Serve); without it the
// runner falls back to process-group semantics only.
//
// # Confiners
//
// A confinement backend that must restrict the command's own process (for
// example with Landlock, which binds a process for good) registers a
// [Confiner] with [RegisterConfiner] and names it in [Spec.Confine]. The
// supervisor then starts the command through a short-lived helper: the
// binary re-executed once more, which calls the confiner and execs the
// command in its place. A confiner that asks for namespaces
// ([RegisterIsolation]) needs no helper: its supervisor starts in them as
// the init of a PID namespace, confines one thread of its own and forks the
// command from it. The long-lived caller is never restricted.
package runner
