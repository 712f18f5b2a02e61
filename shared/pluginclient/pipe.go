package pluginclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// pipeStopWait is how long Close waits for a plugin on the fast path to
// exit after its pipe closed before killing it: go-plugin's own wait.
const pipeStopWait = 2 * time.Second

// launchPipe starts the plugin for the one-shot fast path: two inherited
// pipes carry the contract's messages, framed, instead of go-plugin's
// socket, TLS and gRPC (see internal/wire/pipe.go). No other process can
// reach a pipe, so there is nothing to authenticate, and the host's end of
// the call pipe is the plugin's lifeline. The plugin's answer to Info, which
// ends the start, says it speaks the fast path; a plugin that does not
// exits instead, and the error returned sends Launch to go-plugin.
func launchPipe(cfg LaunchConfig) (*Conn, error) {
	var files []*os.File
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		files = append(files, r, w)
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("plugin pipes: %w", err)
		}
	}
	cmd := exec.Command(cfg.Path)
	cmd.Env = append(append([]string{}, cfg.Env...),
		shared.EnvLogLevel+"="+levelName(cfg.Logger),
		shared.EnvOneShot+"=1",
		wire.PipeEnv(3, 4),
	)
	cmd.ExtraFiles = []*os.File{inR, outW}
	cmd.Stderr = errW
	cmd.SysProcAttr = cfg.SysProcAttr
	passSupervisor(cmd, cfg)
	err := cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", filepath.Base(cfg.Path), err)
	}
	if cfg.Trace != nil {
		cfg.Trace("plugin exec (pipes, fork and exec)")
	}
	done := make(chan struct{})
	c := &Conn{
		Executor: wire.NewPipeClient(outR, inW, done),
		lifeline: inW, cmd: cmd, oneShot: true, pipeDone: done, pipeOut: outR,
		ContractVersion: shared.ContractVersion,
	}
	c.exit.open(cmd.Process.Pid) // before anything can reap it
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	go relayLogs(errR, cfg.Logger)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
	defer cancel()
	info, err := c.Executor.Info(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("start %s on the fast path: %w", filepath.Base(cfg.Path), err)
	}
	c.pipeInfo = &info
	if cfg.Trace != nil {
		cfg.Trace("plugin start (its start to its Info answer)")
	}
	return c, nil
}

// closePipe stops a plugin on the fast path: its pipe closes, which
// cancels its calls, and it is killed if it has not exited in time.
func (c *Conn) closePipe() {
	c.closeLifeline()
	select {
	case <-c.pipeDone:
	case <-time.After(pipeStopWait):
		_ = c.cmd.Process.Kill()
		<-c.pipeDone
	}
	// The plugin has exited, so its answers have ended: the reader is at
	// the end of the pipe, and the host's end can go.
	_ = c.pipeOut.Close()
}

// relayLogs passes the plugin's JSON log lines on to logger at their own
// level, as go-plugin does for a plugin it started; other lines go at
// debug level.
func relayLogs(r io.ReadCloser, logger hclog.Logger) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			logLine(logger, sanitizeLogLine(line))
		}
		if err != nil {
			return
		}
	}
}

func logLine(logger hclog.Logger, line []byte) {
	var entry map[string]any
	if json.Unmarshal(line, &entry) != nil {
		if s := string(line); len(s) > 0 {
			logger.Debug(trimNewline(s))
		}
		return
	}
	msg, _ := entry["@message"].(string)
	level := hclog.Info
	if l, ok := entry["@level"].(string); ok {
		level = hclog.LevelFromString(l)
	}
	var args []any
	for k, v := range entry {
		if len(k) > 0 && k[0] != '@' {
			args = append(args, k, v)
		}
	}
	logger.Log(level, msg, args...)
}

func trimNewline(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
