// Command faultplugin is a sandbox plugin that misbehaves on request, for
// the manager's fault-injection tests. It reads its mode from the file named
// by $FAULT_MODE_FILE whenever it decides (at start and at each call), so a
// test can change it between calls, and appends its pid to $FAULT_PID_FILE.
//
// Modes: ok, hang-start (never completes the handshake), garbage (writes a
// line that is not a handshake), crash-execute (dies during a call, after
// some output), hang-execute (never answers a call, ignoring cancellation),
// exit-now (exits on its own, idle, within 50 ms of the mode being set),
// contract-99 (completes the handshake but declares only contract version
// 99 in Info), handshake-v99 (answers the handshake with contract version
// 99), report (prints the request's remote fields as JSON instead of
// running it), remote (the same, and Info says Remote), remote-files (Info
// says Remote; Execute returns the files listed in $FAULT_FILES, a JSON list
// of shared.File).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
)

func mode() string {
	data, _ := os.ReadFile(os.Getenv("FAULT_MODE_FILE"))
	return strings.TrimSpace(string(data))
}

type executor struct{}

func (executor) Info(context.Context) (shared.Info, error) {
	versions := []int{shared.ContractVersion}
	if mode() == "contract-99" {
		versions = []int{99}
	}
	return shared.Info{Name: "fault", Version: "0", ContractVersions: versions, Remote: mode() == "remote" || mode() == "remote-files"}, nil
}

// settings are the plugin's own (plugins.config.fault): probe
// "unsupported" makes Probe say so, best_effort lets it run anyway.
var (
	settingsMu sync.Mutex
	settings   struct {
		Probe      string `json:"probe"`
		BestEffort bool   `json:"best_effort"`
	}
)

func (executor) SetConfig(_ context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	settingsMu.Lock()
	defer settingsMu.Unlock()
	s := settings
	if problems := backend.DecodeConfig(doc, &s); problems != nil {
		return problems, nil
	}
	if s.Probe != "" && s.Probe != "healthy" && s.Probe != "unsupported" {
		return []shared.ConfigProblem{{Key: "probe", Message: fmt.Sprintf("%q is neither healthy nor unsupported", s.Probe)}}, nil
	}
	settings = s
	return nil, nil
}

func (executor) Probe(context.Context) (shared.Probe, error) {
	settingsMu.Lock()
	defer settingsMu.Unlock()
	if settings.Probe == "unsupported" {
		return shared.Probe{Status: shared.Unsupported, Reason: "told so", BestEffort: settings.BestEffort}, nil
	}
	return shared.Probe{Status: shared.Healthy}, nil
}

func (executor) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	switch mode() {
	case "crash-execute":
		_ = emit([]byte("partial output\n"))
		time.Sleep(100 * time.Millisecond) // let the output leave
		os.Exit(3)
	case "hang-execute":
		time.Sleep(time.Hour) // ignores ctx on purpose
	case "remote-files":
		var files []shared.File
		data, err := os.ReadFile(os.Getenv("FAULT_FILES"))
		if err != nil {
			return shared.Result{}, err
		}
		if err := json.Unmarshal(data, &files); err != nil {
			return shared.Result{}, err
		}
		return shared.Result{Files: files}, nil
	case "report", "remote":
		out, err := json.Marshal(struct {
			Skill   shared.Skill
			Command shared.Command
			Mounts  []shared.Mount
		}{req.Skill, req.Command, req.Mounts})
		if err != nil {
			return shared.Result{}, err
		}
		return shared.Result{}, emit(out)
	}
	return backend.Run(ctx, backend.SpecFor(req), emit)
}

func main() {
	if f, err := os.OpenFile(os.Getenv("FAULT_PID_FILE"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(f, os.Getpid())
		f.Close()
	}
	switch mode() {
	case "hang-start":
		time.Sleep(time.Hour)
	case "handshake-v99":
		fmt.Println("1|99|unix|/nonexistent/plugin.sock|grpc|")
		time.Sleep(time.Hour)
	case "garbage":
		fmt.Println("this is not a go-plugin handshake")
		time.Sleep(time.Hour)
	}
	go func() {
		for range time.Tick(50 * time.Millisecond) {
			if mode() == "exit-now" {
				os.Exit(0)
			}
		}
	}()
	backend.Serve(executor{}, backend.WithoutFastPath()) // a plugin that predates the fast path
}
