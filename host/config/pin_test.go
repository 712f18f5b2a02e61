package config

import (
	"os"
	"strings"
	"testing"
)

func TestWritePinsKeepsTheFileAsWritten(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	old := strings.Repeat("1", 64)
	tests := []struct {
		name, in, want string
	}{
		{
			name: "replace one, add one, keep comments and odd indentation",
			in:   "# my settings\nsandbox:\n    network: true   # keep me\n\nplugins:\n    dirs: [bin]   # here\n    sha256:\n        landlock: \"" + old + "\"  # old pin\n        other: " + old + "\n# trailing comment\n",
			want: "# my settings\nsandbox:\n    network: true   # keep me\n\nplugins:\n    dirs: [bin]   # here\n    sha256:\n        landlock: " + a + "  # old pin\n        other: " + old + "\n        \"null\": " + b + "\n# trailing comment\n",
		},
		{
			name: "no plugins section",
			in:   "sandbox:\n  network: false # no\n",
			want: "sandbox:\n  network: false # no\nplugins:\n  sha256:\n    \"landlock\": " + a + "\n    \"null\": " + b + "\n",
		},
		{
			name: "plugins without sha256",
			in:   "plugins:\n  auto_mtls: true\nmatch:\n  limit: 3\n",
			want: "plugins:\n  auto_mtls: true\n  sha256:\n    \"landlock\": " + a + "\n    \"null\": " + b + "\nmatch:\n  limit: 3\n",
		},
		{
			name: "empty sha256",
			in:   "plugins:\n  sha256:\nmatch:\n  limit: 3",
			want: "plugins:\n  sha256:\n    \"landlock\": " + a + "\n    \"null\": " + b + "\nmatch:\n  limit: 3\n",
		},
		{
			name: "empty file",
			in:   "",
			want: "plugins:\n  sha256:\n    \"landlock\": " + a + "\n    \"null\": " + b + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			p := write(t, tt.in)
			if err := WritePins(p, map[string]string{"landlock": a, "null": b}); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(p)
			if string(data) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", data, tt.want)
			}
			c, err := Load(p)
			if err != nil || c.Plugins.SHA256["landlock"] != a || c.Plugins.SHA256["null"] != b {
				t.Fatalf("reload: %v %+v", err, c)
			}
		})
	}
}

func TestWritePinsFlowStyleFallsBack(t *testing.T) {
	isolate(t)
	p := write(t, "# kept\nplugins: {sha256: {}}\n")
	sum := strings.Repeat("c", 64)
	if err := WritePins(p, map[string]string{"null": sum}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || c.Plugins.SHA256["null"] != sum {
		t.Fatalf("reload: %v", err)
	}
}
