package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/shared"
)

func TestScriptEnv(t *testing.T) {
	host := []string{
		"PATH=/bin", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TERM=xterm", "TZ=UTC", "USER=u", "LOGNAME=u", "TMPDIR=/t",
		"OPENAI_API_KEY=sk-secret", "AWS_SECRET_ACCESS_KEY=x", "PASSME=1", "SSH_AUTH_SOCK=/s",
	}
	got := scriptEnv(host, []string{"PASSME", "NEW=v", "ABSENT", "PATH=/override"})
	want := []string{"PATH=/override", "HOME=/h", "LANG=C", "LC_ALL=C.UTF-8", "TERM=xterm", "TZ=UTC", "USER=u", "LOGNAME=u", "TMPDIR=/t", "PASSME=1", "NEW=v"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scriptEnv = %q\nwant %q", got, want)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte(""), 0o644)
	env := []string{"PATH=/nonexistent:" + dir}
	if p, err := lookPath("tool", env); err != nil || p != exe {
		t.Errorf("lookPath(tool) = %q, %v", p, err)
	}
	if _, err := lookPath("plain", env); err == nil {
		t.Error("a non-executable file was found")
	}
	if p, err := lookPath("/abs/x", env); err != nil || p != "/abs/x" {
		t.Errorf("absolute paths pass through: %q %v", p, err)
	}
}

func TestResultText(t *testing.T) {
	g := grant.Grant{Timeout: 1500 * time.Millisecond}
	tests := []struct {
		res  shared.Result
		want string
	}{
		{shared.Result{}, "out\n"},
		{shared.Result{ExitCode: 3}, "Error (exit 3):\nout\n"},
		{shared.Result{ExitCode: -1, Signal: "SIGSEGV"}, "Error (signal SIGSEGV):\nout\n"},
		{shared.Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true}, "Error (timed out):\nout\n\n[killed: exceeded 1.5s]"},
	}
	for _, tt := range tests {
		r := &RunResult{Grant: g, Output: []byte("out\n"), Result: tt.res}
		if got := r.Text(); got != tt.want {
			t.Errorf("Text(%+v) = %q, want %q", tt.res, got, tt.want)
		}
		if r.OK() != (tt.want == "out\n") {
			t.Errorf("OK(%+v) = %v", tt.res, r.OK())
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	c := &cappedBuffer{limit: 10}
	for i := 0; i < 100; i++ {
		c.write([]byte("0123456789"))
	}
	if n := len(c.Bytes()); n != 10+slack || !c.truncated {
		t.Fatalf("kept %d bytes, truncated=%v", n, c.truncated)
	}
}

// TestWriteTextMatchesText checks that the streaming rendering the CLI uses
// and Text agree, for joined and chunked output alike.
func TestWriteTextMatchesText(t *testing.T) {
	results := []*RunResult{
		{Output: []byte("ok\n")},
		{Output: []byte("partial"), Result: shared.Result{ExitCode: 3}},
		{Output: []byte("x"), Result: shared.Result{Signal: "SIGKILL", ExitCode: -1}},
		{Output: []byte("slow"), Result: shared.Result{TimedOut: true}},
		{Output: nil},
	}
	for _, r := range results {
		var c cappedBuffer
		c.limit = 1 << 20
		for _, b := range r.Output {
			c.write([]byte{b})
		}
		chunked := *r
		chunked.Output, chunked.chunks = nil, c.chunks
		var b strings.Builder
		if err := chunked.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != r.Text() {
			t.Errorf("WriteText = %q, Text = %q", b.String(), r.Text())
		}
		if joined := c.Bytes(); string(joined) != string(r.Output) {
			t.Errorf("Bytes = %q, want %q", joined, r.Output)
		}
	}
}
