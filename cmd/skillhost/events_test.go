package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/events"
	"github.com/skillhost/skillhost/internal/testbin"
	"github.com/skillhost/skillhost/internal/testskill"
)

// skillhostBinary builds the real skillhost and the null plugin, and
// returns the binary and the plugin directory.
func skillhostBinary(t testing.TB) (string, string) {
	t.Helper()
	dir, err := testbin.Build("./cmd/skillhost", "./cmd/skillhost-sandbox-null")
	if err != nil {
		t.Fatal(err)
	}
	return testbin.Path("./cmd/skillhost"), dir
}

// TestRunEventsStream checks that `run --events` streams: the script
// prints, sleeps, then waits for a gate file that the test creates only
// after it has read the first output delta. A host that buffered output
// until the end would make the script time out waiting.
func TestRunEventsStream(t *testing.T) {
	bin, pluginDir := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "ticker", testskill.Skill{Name: "ticker", Description: "test skill ticker", Body: "# ticker\n", Scripts: map[string]string{"tick.sh": `#!/bin/sh
echo first
sleep 1
i=0
while [ ! -e gate ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
if [ -e gate ]; then echo second after gate; else echo second without gate; fi
`}})
	for _, strategy := range []string{"none", "null"} {
		t.Run(strategy, func(t *testing.T) {
			work := t.TempDir()
			cmd := exec.Command(bin, "--skills", skills, "run", "ticker", "tick", "--events", "--strategy", strategy)
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+pluginDir, "SKILLHOST_SANDBOX__ENABLED=true", "SKILLHOST_SCRIPTS__WORKDIR=cwd")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var got []events.Event
			scanner := bufio.NewScanner(stdout)
			scanner.Buffer(nil, 1<<20)
			for scanner.Scan() {
				var e events.Event
				if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
					t.Fatalf("line %q: %v", scanner.Text(), err)
				}
				if e.Event == events.ToolCallOutputDelta && delta(t, e) == "first\n" {
					if err := os.WriteFile(filepath.Join(work, "gate"), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				got = append(got, e)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("skillhost: %v\n%s", err, stderr.String())
			}

			var names []string
			var output strings.Builder
			for i, e := range got {
				names = append(names, e.Event)
				if e.SequenceNumber != int64(i+1) {
					t.Errorf("event %d (%s) has sequence %d", i, e.Event, e.SequenceNumber)
				}
				if e.RunID != got[0].RunID || e.Scope != "tool" {
					t.Errorf("event %s: run %v scope %v", e.Event, e.RunID, e.Scope)
				}
				if e.Event == events.ToolCallOutputDelta {
					output.WriteString(delta(t, e))
				}
			}
			if len(names) < 4 || names[0] != events.RunStarted || names[len(names)-2] != events.RunCompleted || names[len(names)-1] != events.StreamEnded {
				t.Fatalf("events %v: want run.started, deltas, run.completed, stream.ended", names)
			}
			if output.String() != "first\nsecond after gate\n" {
				t.Errorf("deltas carried %q: the first delta did not arrive while the script was running", output.String())
			}
			var start struct {
				host.RunStarted
				Grant json.RawMessage `json:"grant"` // the grant's JSON form is for reading, not decoding
			}
			var end struct {
				host.RunReport
				Grant      json.RawMessage   `json:"grant"`
				Violations []json.RawMessage `json:"violations"`
			}
			if err := got[0].DecodeData(&start); err != nil {
				t.Fatal(err)
			}
			if err := got[len(got)-2].DecodeData(&end); err != nil {
				t.Fatal(err)
			}
			if start.Skill != "ticker" || start.Tool != "tick" || start.Strategy != strategy || len(start.Grant) == 0 {
				t.Errorf("run.started data %+v", start)
			}
			if end.Output != "first\nsecond after gate\n" || end.ExitCode != 0 || end.TimedOut ||
				end.DurationMS < 1000 || end.Violations == nil {
				t.Errorf("run.completed data %+v", end)
			}
		})
	}
}

// delta is the text of an output delta read from JSON.
func delta(t *testing.T, e events.Event) string {
	t.Helper()
	var d host.OutputDelta
	if err := e.DecodeData(&d); err != nil {
		t.Fatal(err)
	}
	return d.Delta
}

// TestRunEventsEnds checks the last events of runs that fail, time out or
// cannot start.
func TestRunEventsEnds(t *testing.T) {
	bin, _ := skillhostBinary(t)
	skills := t.TempDir()
	// Only the slow tool gets a short timeout: on a loaded machine even a
	// trivial script can take a second.
	testskill.Add(t, skills, "ends", testskill.Skill{Name: "ends", Description: "test skill ends", Body: "# ends\n", Scripts: map[string]string{"fail.sh": "#!/bin/sh\necho partial\nexit 3\n"}})
	testskill.Add(t, skills, "slow", testskill.Skill{Name: "slow", Description: "test skill slow", FrontMatter: "timeout: 1\n", Body: "# slow\n", Scripts: map[string]string{"slow.sh": "#!/bin/sh\necho started\nexec sleep 30\n"}})
	tests := []struct {
		args     []string
		exit     int
		last     string
		contains string
	}{
		{[]string{"run", "ends", "fail"}, 1, events.RunFailed, `"exit_code":3`},
		{[]string{"run", "slow", "slow"}, 1, events.RunFailed, `"timed_out":true`},
		{[]string{"run", "ends", "nosuch"}, 2, events.RunFailed, `"error":"skill \"ends\" has no tool \"nosuch\"`},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, append([]string{"--skills", skills}, append(tt.args, "--events")...)...)
		cmd.Env = append(os.Environ(), "SKILLHOST_SANDBOX__ENABLED=false")
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var last, end events.Event
		json.Unmarshal([]byte(lines[len(lines)-1]), &last)
		if len(lines) >= 2 {
			json.Unmarshal([]byte(lines[len(lines)-2]), &end)
		}
		if code != tt.exit || last.Event != events.StreamEnded || end.Event != tt.last || !strings.Contains(lines[len(lines)-2], tt.contains) {
			t.Errorf("%v: exit %d, last lines:\n%s\n%s", tt.args, code, lines[max(len(lines)-2, 0)], lines[len(lines)-1])
		}
	}
}

// TestRunEventsInterrupted checks that an interrupted run ends its stream
// with run.interrupted and stream.ended, and stops the script.
func TestRunEventsInterrupted(t *testing.T) {
	bin, _ := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "waiter", testskill.Skill{Name: "waiter", Description: "test skill waiter", Body: "# waiter\n", Scripts: map[string]string{"wait.sh": "#!/bin/sh\necho waiting\nexec sleep 60\n"}})
	cmd := exec.Command(bin, "--skills", skills, "run", "waiter", "wait", "--events")
	cmd.Env = append(os.Environ(), "SKILLHOST_SANDBOX__ENABLED=false")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var names []string
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		var e events.Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Event)
		if e.Event == events.ToolCallOutputDelta {
			cmd.Process.Signal(os.Interrupt)
		}
	}
	cmd.Wait()
	if got := strings.Join(names, " "); got != "run.started tool_call.output.delta run.interrupted stream.ended" {
		t.Errorf("events: %s", got)
	}
}
