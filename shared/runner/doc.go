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
// process that started it dies. The supervisor of an unconfined command
// needs nothing of the program: this package dispatches it while it
// initialises, before main. Where there is no supervisor (outside Linux),
// the runner falls back to process-group semantics only.
//
// # Runners
//
// A [Runner] (New) holds its settings: whether it keeps a supervisor
// started ahead of time for the next command ([WithoutSpares]) and the
// confiners it offers ([WithConfiner]). Two runners in one program can
// differ; the package-level [Run] and [Execute] use one the package keeps.
//
// # Confiners
//
// A confinement backend that must restrict the command's own process (for
// example with Landlock, which binds a process for good) offers a
// [Confinement] with [WithConfiner] and names it in [Spec.Confine]. The
// supervisor then starts the command through a short-lived helper: the
// binary re-executed once more, which calls the confiner and execs the
// command in its place. A confiner that asks for namespaces
// (Confinement.Isolate) needs no helper: its supervisor starts in them as
// the init of a PID namespace, confines one thread of its own and forks the
// command from it. The long-lived caller is never restricted. Those helpers
// need the confiner, so New does their job when the process is one of
// them: a program makes its confining Runner first thing in main.
//
// # Wrappers
//
// A backend that execs a wrapper which forks (bubblewrap) passes it
// descriptors ([Spec.ExtraFiles]), takes the command's own status from a
// status channel ([Spec.StatusChannel], [StatusInit]) and spares the
// wrapper from the deadline's SIGTERM ([Spec.TermBelow]).
package runner
