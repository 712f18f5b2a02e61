package main

import "testing"

// Paths and hosts a skill declared are its own text: they reach the
// terminal escaped, never as control sequences.
func TestListEscapesDeclaredText(t *testing.T) {
	got := list([]string{"/data", "/tmp/\x1b[2Jx", "api.example.com\u202e"})
	if want := `[/data, /tmp/\x1b[2Jx, api.example.com\u202e]`; got != want {
		t.Errorf("list = %q, want %q", got, want)
	}
}
