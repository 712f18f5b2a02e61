package mcpserver

import "testing"

// An argument error speaks of the tool's args, not of the CLI's --args
// flag (issue 35).
func TestToolArgsError(t *testing.T) {
	got := toolArgsError("--args: unterminated quote")
	want := "args: unterminated quote (args is split like a POSIX shell; pass argv for exact arguments)"
	if got != want {
		t.Errorf("toolArgsError = %q, want %q", got, want)
	}
	if got := toolArgsError("tool pdf/x: interpreter not found"); got != "tool pdf/x: interpreter not found" {
		t.Errorf("another error changed: %q", got)
	}
}
