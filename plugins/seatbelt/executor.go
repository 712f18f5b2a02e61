// Package seatbelt is the macOS sandbox backend. It renders the effective
// grant into a deny-by-default Seatbelt (SBPL) profile and runs each
// command as /usr/bin/sandbox-exec -f <profile> -D KEY=VALUE... <argv>.
// The package builds everywhere, so profiles can be reviewed on any OS
// (skillhost profile); off macOS Probe reports unsupported and Execute
// refuses.
package seatbelt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/denials"
	"github.com/skillhost/skillhost/shared/egress/proxy"
)

// Version is the backend's version.
const Version = "0.1.0"

// SandboxExec is where macOS keeps sandbox-exec. It is always called by
// absolute path.
const SandboxExec = "/usr/bin/sandbox-exec"

// Executor is the Seatbelt backend.
type Executor struct {
	// sandboxExec and goos are fixed in production and replaced by tests
	// that exercise the whole Execute path on other systems.
	sandboxExec string
	goos        string
	// healthy remembers a successful probe, so runs after the first do not
	// each pay for an extra sandbox-exec; a failed probe is tried again.
	healthy atomic.Bool
}

// New returns the Seatbelt backend.
func New() *Executor { return &Executor{sandboxExec: SandboxExec, goos: runtime.GOOS} }

// Info implements shared.Executor. Seatbelt has no namespaces: Isolation
// stays the zero value, every one shared with the host.
func (e *Executor) Info(context.Context) (shared.Info, error) {
	return shared.Info{
		Name:             "seatbelt",
		Version:          Version,
		ContractVersions: []int{shared.ContractVersion},
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		Enforces:         shared.Enforcement{FSRead: true, FSWrite: true, Network: true, Timeout: true, ProcessIsolation: true, Egress: true},
	}, nil
}

// Probe implements shared.Executor. On macOS it applies a trivial profile,
// which fails inside another Seatbelt sandbox: they cannot nest.
func (e *Executor) Probe(ctx context.Context) (shared.Probe, error) {
	if e.goos != "darwin" {
		return shared.Probe{Status: shared.Unsupported, Reason: "sandbox-exec requires macOS"}, nil
	}
	if _, err := os.Stat(e.sandboxExec); err != nil {
		return shared.Probe{Status: shared.Unsupported, Reason: fmt.Sprintf("%s is missing: %v", e.sandboxExec, err)}, nil
	}
	out, err := exec.CommandContext(ctx, e.sandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").CombinedOutput()
	if err != nil {
		reason := strings.TrimSpace(string(out))
		if strings.Contains(reason, "sandbox_apply") {
			reason = "already inside a Seatbelt sandbox, and Seatbelt sandboxes cannot nest (" + reason + ")"
		}
		return shared.Probe{Status: shared.Unhealthy, Reason: reason}, nil
	}
	return shared.Probe{Status: shared.Healthy, Reason: "sandbox-exec applies deny-by-default profiles (deprecated by Apple, still shipped)",
		Details: map[string]string{"sandbox_exec": e.sandboxExec}}, nil
}

// ErrUnsupported is returned, wrapped, when sandbox-exec cannot be used.
var ErrUnsupported = errors.New("the seatbelt plugin cannot confine scripts here")

// Execute implements shared.Executor.
func (e *Executor) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	if !e.healthy.Load() {
		probe, _ := e.Probe(ctx)
		if probe.Status != shared.Healthy {
			return shared.Result{}, fmt.Errorf("%w: %s", ErrUnsupported, probe.Reason)
		}
		e.healthy.Store(true)
	}
	tmp, err := os.MkdirTemp("", "skillhost-run-")
	if err != nil {
		return shared.Result{}, fmt.Errorf("private temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	env := Env{RunID: req.RunID, TempDir: tmp, SocketDir: os.Getenv("PLUGIN_UNIX_SOCKET_DIR")}
	var px *proxy.Proxy
	if req.Grant.ByName() {
		// The run reaches only this proxy (the profile allows its port
		// alone); a per-run credential keeps other runs off it.
		if px, err = proxy.Start(proxy.Config{Egress: req.Grant.Egress, Logger: backend.LoggerFrom(ctx)}); err != nil {
			return shared.Result{}, shared.Refused(shared.ReasonEgress, err)
		}
		defer px.Close()
		caFile := ""
		if bundle := px.CABundle(); bundle != nil {
			caFile = filepath.Join(tmp, "skillhost-ca.pem")
			if err := os.WriteFile(caFile, bundle, 0o644); err != nil {
				return shared.Result{}, fmt.Errorf("egress trust bundle: %w", err)
			}
		}
		env.ProxyPort = px.Port()
		for _, kv := range px.Env(px.Port(), caFile) {
			k, v, _ := strings.Cut(kv, "=")
			req.Env = backend.WithEnv(req.Env, k, v)
		}
	}
	prof := Render(req, env)
	file, err := writeProfile(prof.Text)
	if err != nil {
		return shared.Result{}, err
	}
	defer os.Remove(file) // also after a failure or a timeout

	spec := backend.SpecFor(req)
	spec.Argv = Command(e.sandboxExec, file, prof, req.Argv)
	spec.Env = backend.WithEnv(req.Env, "TMPDIR", tmp)
	var captured denials.Capture
	res, err := backend.Run(ctx, spec, captured.Tee(emit))
	if err != nil {
		return shared.Result{}, err
	}
	res.Violations = denials.Scan(captured.String(), prof, denials.Options{
		Network: req.Grant.Network, Limits: req.Limits, Ignore: denials.Launcher(req.Argv, req.SkillDir), Dir: req.Dir,
	})
	if px != nil {
		res.Violations = append(res.Violations, px.Violations()...)
	}
	res.NotEnforced = []string{"resource limits (Seatbelt has none; the timeout and output limit still apply)"}
	return res, nil
}

// Explain implements shared.Explainer: the profile and the command line,
// with a placeholder for the per-run temporary directory.
func (e *Executor) Explain(_ context.Context, req shared.Request) (shared.Explanation, error) {
	prof := Render(req, Env{RunID: req.RunID, TempDir: "/private/var/folders/<per-run temporary directory>", SocketDir: os.Getenv("PLUGIN_UNIX_SOCKET_DIR")})
	return shared.Explanation{Format: "sbpl", Text: prof.Text, Argv: Command(e.sandboxExec, "<profile file>", prof, req.Argv)}, nil
}

// writeProfile stores the profile in a fresh 0600 file and returns its path.
func writeProfile(text string) (string, error) {
	f, err := os.CreateTemp("", "skillhost-*.sb")
	if err != nil {
		return "", fmt.Errorf("profile file: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("profile file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("profile file: %w", err)
	}
	return f.Name(), nil
}
