package shared

import "testing"

func TestUnder(t *testing.T) {
	tests := []struct {
		path, root string
		want       bool
	}{
		{"/tmp", "/tmp", true},
		{"/tmp/x", "/tmp", true},
		{"/tmpfoo", "/tmp", false},
		{"/tmp/../etc", "/tmp", true}, // callers pass clean paths; this documents the contract
		{"/etc", "/", true},
		{"/", "/", true},
		{"/a/b", "/a/b/c", false},
	}
	for _, tt := range tests {
		if got := Under(tt.path, tt.root); got != tt.want {
			t.Errorf("Under(%q, %q) = %v", tt.path, tt.root, got)
		}
	}
}
