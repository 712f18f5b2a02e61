package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/skilltar"
)

// faultRig is a manager whose plugin "fault" misbehaves as its mode file
// says (see testdata/faultplugin).
type faultRig struct {
	m        *Manager
	dir      string // holds skillhost-sandbox-fault
	modeFile string
	pidFile  string
}

func newFaultRig(t *testing.T, mod func(*Options)) *faultRig {
	t.Helper()
	built, err := testbin.Build("./host/internal/sandbox/testdata/faultplugin")
	if err != nil {
		t.Fatal(err)
	}
	dir, tmp := t.TempDir(), t.TempDir()
	r := &faultRig{dir: dir, modeFile: filepath.Join(tmp, "mode"), pidFile: filepath.Join(tmp, "pids")}
	copyFile(t, filepath.Join(built, "faultplugin"), filepath.Join(dir, "skillhost-sandbox-fault"))
	r.set(t, "ok")
	r.m = manager(t, func(o *Options) {
		o.Dirs = []string{dir}
		o.Env = append(o.Env, "FAULT_MODE_FILE="+r.modeFile, "FAULT_PID_FILE="+r.pidFile)
		o.StartTimeout = 3 * time.Second
		if mod != nil {
			mod(o)
		}
	})
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	// A hard link opens nothing for writing: a file written here could be
	// held open by a process that another test forks meanwhile, and exec'ing
	// it would then fail with "text file busy".
	os.Remove(to)
	if err := os.Link(from, to); err == nil {
		return
	}
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil { // replace, never rewrite in place
		t.Fatal(err)
	}
}

func (r *faultRig) set(t *testing.T, mode string) {
	t.Helper()
	if err := os.WriteFile(r.modeFile, []byte(mode), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call runs echo through the plugin with a 30 s script timeout.
func (r *faultRig) call(ctx context.Context, word string) (string, error) {
	req := request("echo " + word)
	out, res, err := execute(ctx, r.m.Executor("fault"), req)
	if err == nil && res.ExitCode != 0 {
		err = errors.New("exit " + strconv.Itoa(res.ExitCode))
	}
	return out, err
}

// works checks that a call succeeds, as it must after every fault.
func (r *faultRig) works(t *testing.T) {
	t.Helper()
	r.set(t, "ok")
	if out, err := r.call(context.Background(), "fine"); err != nil || out != "fine\n" {
		t.Fatalf("the next call after the fault: %q, %v", out, err)
	}
}

// noLeftovers checks that every plugin process but the current one is gone.
func (r *faultRig) noLeftovers(t *testing.T) {
	t.Helper()
	data, _ := os.ReadFile(r.pidFile)
	current := r.m.Pid("fault")
	for _, f := range strings.Fields(string(data)) {
		if pid, _ := strconv.Atoi(f); pid != current {
			waitGone(t, pid)
		}
	}
}

// TestFaultyPlugins injects each fault a plugin can commit and checks that
// the host reports it clearly, does not hang or crash, leaves no plugin
// process behind, and that the call after it works.
func TestFaultyPlugins(t *testing.T) {
	cases := []struct {
		mode    string
		wantErr []string // substrings of the fault's error
		opts    func(*Options)
	}{
		{mode: "crash-execute", wantErr: []string{`sandbox plugin "fault" crashed`}},
		{mode: "hang-start", wantErr: []string{`sandbox plugin "fault" at `, "timeout while waiting for plugin to start"}},
		{mode: "garbage", wantErr: []string{`sandbox plugin "fault" at `, "this is not a go-plugin handshake"}},
		{mode: "contract-99", wantErr: []string{`sandbox plugin "fault" (`, "speaks contract version 99",
			fmt.Sprintf("this skillhost speaks contract version %d", shared.ContractVersion)}},
		{mode: "handshake-v99", wantErr: []string{`sandbox plugin "fault" at `, "speaks contract version 99",
			fmt.Sprintf("this skillhost speaks contract version %d", shared.ContractVersion)}},
		{mode: "hang-execute", wantErr: []string{`sandbox plugin "fault" did not answer`, "next call starts a fresh one"},
			opts: func(o *Options) { o.AnswerMargin = time.Second }},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			r := newFaultRig(t, tc.opts)
			r.set(t, tc.mode)
			req := request("echo hello")
			req.Grant.Timeout = time.Second // bounds hang-execute
			done := make(chan error, 1)
			go func() {
				_, _, err := execute(context.Background(), r.m.Executor("fault"), req)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("the faulty call never returned")
			}
			if err == nil {
				t.Fatal("the faulty call succeeded")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			r.works(t)
			r.noLeftovers(t)
		})
	}
}

// TestIncompatiblePlugin checks that a plugin whose Info lacks the host's
// contract version is refused before it is sent anything, that Info still
// reports what it declared (for skillhost plugins), and that its process is
// stopped.
func TestIncompatiblePlugin(t *testing.T) {
	r := newFaultRig(t, nil)
	r.set(t, "contract-99")
	_, err := r.m.Executor("fault").Info(context.Background())
	var ie *IncompatibleError
	if !errors.As(err, &ie) {
		t.Fatalf("Info of an incompatible plugin: %v, want an *IncompatibleError", err)
	}
	if ie.Name != "fault" || !slices.Equal(ie.Info.ContractVersions, []int{99}) || ie.Path != filepath.Join(r.dir, "skillhost-sandbox-fault") {
		t.Errorf("error names %q at %q with versions %v", ie.Name, ie.Path, ie.Info.ContractVersions)
	}
	if pid := r.m.Pid("fault"); pid != 0 {
		t.Errorf("the incompatible plugin is still held as process %d", pid)
	}
	r.noLeftovers(t)
}

// TestPluginExitsBetweenCalls: a plugin that exits on its own while idle
// is replaced without the next call seeing an error.
func TestPluginExitsBetweenCalls(t *testing.T) {
	r := newFaultRig(t, nil)
	r.works(t)
	first := r.m.Pid("fault")
	r.set(t, "exit-now")
	waitGone(t, first)
	r.works(t)
	if second := r.m.Pid("fault"); second == first || second == 0 {
		t.Errorf("plugin pid %d -> %d; want a fresh process", first, second)
	}
	r.noLeftovers(t)
}

// TestPinnedPluginReplacedOnDisk: a running plugin keeps serving when its
// binary is replaced, a restart refuses the new binary with a clear
// checksum error, and once the pinned binary is back the next call works.
func TestPinnedPluginReplacedOnDisk(t *testing.T) {
	built, err := testbin.Build("./host/internal/sandbox/testdata/faultplugin")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Sum(filepath.Join(built, "faultplugin"))
	if err != nil {
		t.Fatal(err)
	}
	r := newFaultRig(t, func(o *Options) { o.Pins = map[string]string{"fault": sum} })
	r.works(t)
	path := filepath.Join(r.dir, "skillhost-sandbox-fault")
	copyFile(t, filepath.Join(binDir, "skillhost-sandbox-null"), path)
	r.works(t) // the verified process is still the one serving

	r.set(t, "crash-execute")
	if _, err := r.call(context.Background(), "x"); err == nil {
		t.Fatal("crash-execute succeeded")
	}
	r.set(t, "ok")
	_, err = r.call(context.Background(), "x")
	var ce *ChecksumError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "expected "+sum) {
		t.Fatalf("restart with a replaced binary: %v, want a checksum error naming %s", err, path)
	}
	copyFile(t, filepath.Join(built, "faultplugin"), path)
	r.works(t)
	r.noLeftovers(t)
}

// A backend whose Info says Remote gets the run described without host
// paths: the skill by digest, the command relative to it, the grant as
// mounts. A local one gets none of it, and pays nothing for it.
func TestRemoteBackendGetsSkillCommandAndMounts(t *testing.T) {
	skillDir, work, data := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(skillDir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(skillDir, "scripts", "go.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	req := request("unused")
	req.Argv = []string{"/bin/sh", "-e", script, "one", "two words"}
	req.SkillDir, req.Dir = skillDir, work
	req.Grant.FSRead = []string{skillDir, data}
	req.Grant.FSWrite = []string{work}

	type report struct {
		Skill   shared.Skill
		Command shared.Command
		Mounts  []shared.Mount
	}
	for _, mode := range []string{"report", "remote"} {
		t.Run(mode, func(t *testing.T) {
			r := newFaultRig(t, nil)
			r.set(t, mode)
			out, _, err := execute(context.Background(), r.m.Executor("fault"), req)
			if err != nil {
				t.Fatal(err)
			}
			var got report
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %q", err, out)
			}
			if mode == "report" {
				if got.Skill != (shared.Skill{}) || got.Command.Script != "" || got.Mounts != nil {
					t.Errorf("a local backend got remote fields: %+v", got)
				}
				return
			}
			digest, size, err := skilltar.Digest(skillDir)
			if err != nil {
				t.Fatal(err)
			}
			want := report{
				Skill:   shared.Skill{Name: filepath.Base(skillDir), Digest: digest, Size: size},
				Command: shared.Command{Interpreter: "sh", Script: "scripts/go.sh", Args: []string{"one", "two words"}},
				Mounts: []shared.Mount{
					{Role: shared.MountSkill, Logical: "/skill", HostPath: skillDir},
					{Role: shared.MountWorkspace, Logical: "/workspace", HostPath: work, Writable: true},
					{Role: shared.MountPath, Logical: data, HostPath: data},
				},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("remote fields:\n got %+v\nwant %+v", got, want)
			}

			// A skill that cannot be staged is refused before the plugin
			// sees it, naming what is wrong.
			link := filepath.Join(skillDir, "scripts", "leak")
			if err := os.Symlink("/etc/passwd", link); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(link)
			if _, _, err := execute(context.Background(), r.m.Executor("fault"), req); err == nil || !strings.Contains(err.Error(), link) {
				t.Errorf("a skill holding a symlink was staged: %v", err)
			}
		})
	}
}

// Files a remote backend returns are written back under the writable
// mounts, and nowhere else: not outside a mount, not into a read-only one,
// not through ".." or a symlink the script left in the workspace.
func TestRemoteFilesAreWrittenBackOnlyUnderWritableMounts(t *testing.T) {
	skillDir, work, outside := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(skillDir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(skillDir, "scripts", "go.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // several chunks
	files := []shared.File{
		{Path: "/workspace/out.txt", Mode: 0o600, Data: []byte("hello\n")},
		{Path: "/workspace/sub/dir/big.bin", Mode: 0o700, Data: big},
		{Path: "/workspace/../escape.txt", Data: []byte("x")},
		{Path: "/skill/evil.sh", Data: []byte("x")},
		{Path: "/workspace/link/pwn", Data: []byte("x")},
		{Path: "/workspace", Data: []byte("x")},
		{Path: outside + "/direct", Data: []byte("x")},
	}
	list := filepath.Join(t.TempDir(), "files.json")
	data, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(list, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newFaultRig(t, func(o *Options) { o.Env = append(o.Env, "FAULT_FILES="+list) })
	r.set(t, "remote-files")
	req := request("unused")
	req.Argv = []string{script}
	req.SkillDir, req.Dir = skillDir, work
	req.Grant.FSRead = []string{skillDir}
	req.Grant.FSWrite = []string{work}
	_, res, err := execute(context.Background(), r.m.Executor("fault"), req)
	if err != nil {
		t.Fatal(err)
	}

	for name, want := range map[string][]byte{"out.txt": []byte("hello\n"), "sub/dir/big.bin": big} {
		got, err := os.ReadFile(filepath.Join(work, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d", name, len(got), err, len(want))
		}
	}
	for name, want := range map[string]os.FileMode{"out.txt": 0o644, "sub/dir/big.bin": 0o755} {
		if fi, err := os.Stat(filepath.Join(work, name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", name, fi.Mode().Perm(), err, want)
		}
	}
	for _, p := range []string{filepath.Join(filepath.Dir(work), "escape.txt"), filepath.Join(skillDir, "evil.sh"), filepath.Join(outside, "pwn"), filepath.Join(outside, "direct")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	refused := map[string]bool{}
	for _, v := range res.Violations {
		if v.Kind == "file" {
			refused[v.Target] = true
		}
	}
	for _, f := range files[2:] {
		if !refused[f.Path] {
			t.Errorf("%s: no violation says it was refused (%+v)", f.Path, res.Violations)
		}
	}
	if len(res.Files) != len(files) || res.Files[0].Data != nil {
		t.Errorf("the result should list the %d files without their data: %d files", len(files), len(res.Files))
	}
}
