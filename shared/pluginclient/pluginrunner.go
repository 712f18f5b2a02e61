package pluginclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/hashicorp/go-plugin/runner"
)

// pluginRunner starts a plugin for go-plugin like go-plugin's own command
// runner, except that what the plugin writes on stdout and stderr passes a
// filter before go-plugin parses it. go-plugin v1.8 trusts both: a JSON log
// line whose @message, @level or @timestamp is not a string panics its log
// reader, and a certificate in the handshake's sixth field replaces the
// host's trusted roots (or, without TLS, dereferences nil), either way in
// the host process. A faulty or hostile plugin must never take the host
// down, so those lines are made harmless first.
type pluginRunner struct {
	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser
	pid            int
	// started is told the plugin's pid before anything can reap it.
	started func(pid int)
}

var _ runner.Runner = (*pluginRunner)(nil)

func newPluginRunner(cmd *exec.Cmd, started func(pid int)) (*pluginRunner, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	return &pluginRunner{
		cmd:     cmd,
		stdout:  filtered(outR, handshakeFilter()),
		stderr:  filtered(errR, sanitizeLogLine),
		started: started,
	}, nil
}

func (r *pluginRunner) Start(context.Context) error {
	err := r.cmd.Start()
	// The child has its copies of the write ends; ours must go for the
	// readers to see EOF when it exits.
	r.cmd.Stdout.(*os.File).Close()
	r.cmd.Stderr.(*os.File).Close()
	if err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	if r.started != nil {
		r.started(r.pid) // go-plugin calls Wait only after Start returns
	}
	return nil
}

func (r *pluginRunner) Wait(context.Context) error { return r.cmd.Wait() }

func (r *pluginRunner) Kill(context.Context) error {
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *pluginRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *pluginRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *pluginRunner) Name() string          { return r.cmd.Path }
func (r *pluginRunner) ID() string            { return strconv.Itoa(r.pid) }

func (r *pluginRunner) Diagnose(context.Context) string {
	return fmt.Sprintf("the plugin %s did not complete go-plugin's handshake on its stdout (wrong architecture, a missing library, no execute permission, or a binary that is not a skillhost plugin)", r.cmd.Path)
}

func (r *pluginRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (r *pluginRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// filtered returns a reader of src's lines, each passed through fix.
func filtered(src *os.File, fix func([]byte) []byte) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer src.Close()
		br := bufio.NewReaderSize(src, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if _, werr := pw.Write(fix(line)); werr != nil {
					_, _ = io.Copy(io.Discard, br) // nobody reads: drain so the plugin never blocks
					return
				}
			}
			if err != nil {
				pw.Close()
				return
			}
		}
	}()
	return pr
}

// handshakeFilter blanks the sixth field of the first stdout line, the
// server certificate of go-plugin's own AutoMTLS, which skillhost does not
// use: its TLS identities come from the host (see internal/wire/mtls.go).
func handshakeFilter() func([]byte) []byte {
	first := true
	return func(line []byte) []byte {
		if !first {
			return line
		}
		first = false
		parts := bytes.Split(bytes.TrimRight(line, "\r\n"), []byte("|"))
		if len(parts) >= 6 && len(parts[5]) > 0 {
			parts[5] = nil
			return append(bytes.Join(parts, []byte("|")), '\n')
		}
		return line
	}
}

// sanitizeLogLine rewrites a JSON log line whose hclog fields go-plugin
// would assert to strings but are not: they become strings.
func sanitizeLogLine(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return line
	}
	var raw map[string]any
	if json.Unmarshal(trimmed, &raw) != nil {
		return line
	}
	changed := false
	for _, k := range []string{"@message", "@level", "@timestamp"} {
		if v, ok := raw[k]; ok {
			if _, isString := v.(string); !isString {
				raw[k] = fmt.Sprint(v)
				changed = true
			}
		}
	}
	if !changed {
		return line
	}
	out, err := json.Marshal(raw)
	if err != nil {
		return []byte(strconv.Quote(string(trimmed)) + "\n")
	}
	return append(out, '\n')
}
