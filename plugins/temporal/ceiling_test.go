package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

func TestCeiling(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"read", "write", "secret"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	// A link inside the readable tree to a tree outside it.
	os.Symlink(filepath.Join(root, "secret"), filepath.Join(root, "read", "link"))
	var c Ceiling
	c.FSRead, _ = ParsePaths("--fs-read", []string{filepath.Join(root, "read")})
	c.FSWrite, _ = ParsePaths("--fs-write", []string{filepath.Join(root, "write")})
	if err := c.ParseNetwork([]string{"*.example.com", "10.0.0.5:443"}); err != nil {
		t.Fatal(err)
	}
	c.MaxTimeout = time.Minute
	base := shared.Request{SkillDir: filepath.Join(root, "read", "skill"), ExecPaths: []string{"/usr/lib/python3"},
		Grant: shared.Grant{FSRead: []string{filepath.Join(root, "read")}, FSWrite: []string{filepath.Join(root, "write", "x")}, Timeout: time.Minute}}
	cases := []struct {
		name   string
		change func(r *shared.Request)
		want   string // "" within, else a piece of the reason
	}{
		{"within", func(r *shared.Request) {}, ""},
		{"a path to write may be read", func(r *shared.Request) { r.Grant.FSRead = append(r.Grant.FSRead, filepath.Join(root, "write")) }, ""},
		{"read outside", func(r *shared.Request) { r.Grant.FSRead = []string{filepath.Join(root, "secret")} }, "--fs-read"},
		{"read through a link", func(r *shared.Request) { r.Grant.FSRead = []string{filepath.Join(root, "read", "link")} }, "on this worker"},
		{"read by ..", func(r *shared.Request) { r.Grant.FSRead = []string{filepath.Join(root, "read") + "/../secret"} }, "--fs-read"},
		{"write in the read ceiling", func(r *shared.Request) { r.Grant.FSWrite = []string{filepath.Join(root, "read")} }, "--fs-write"},
		{"skill outside", func(r *shared.Request) { r.SkillDir = filepath.Join(root, "secret") }, "--fs-read"},
		{"interpreter tree outside", func(r *shared.Request) { r.ExecPaths = []string{filepath.Join(root, "secret")} }, "--fs-read"},
		{"stage outside", func(r *shared.Request) { r.Stage = filepath.Join(root, "read") }, "--fs-write"},
		{"timeout over", func(r *shared.Request) { r.Grant.Timeout = time.Hour }, "--max-timeout 1m0s"},
		{"no timeout", func(r *shared.Request) { r.Grant.Timeout = 0 }, "--max-timeout"},
		{"whole network", func(r *shared.Request) { r.Grant.Network = true }, "--network true"},
		{"a host within", func(r *shared.Request) {
			r.Grant.Network, r.Grant.Egress = true, &shared.Egress{Allow: []string{"api.example.com", "*.cdn.example.com:443", "10.0.0.5:443"}}
		}, ""},
		{"a host outside", func(r *shared.Request) {
			r.Grant.Network, r.Grant.Egress = true, &shared.Egress{Allow: []string{"api.example.com", "evil.test"}}
		}, "--network evil.test"},
		{"the domain itself", func(r *shared.Request) {
			r.Grant.Network, r.Grant.Egress = true, &shared.Egress{Allow: []string{"example.com"}}
		}, "--network example.com"},
		{"any name", func(r *shared.Request) { r.Grant.Network, r.Grant.Egress = true, &shared.Egress{Allow: []string{"*"}} }, "--network *"},
		{"another port of a literal", func(r *shared.Request) {
			r.Grant.Network, r.Grant.Egress = true, &shared.Egress{Allow: []string{"10.0.0.5"}}
		}, "--network 10.0.0.5"},
	}
	for _, tc := range cases {
		r := base
		r.Grant.FSRead = append([]string{}, base.Grant.FSRead...)
		tc.change(&r)
		got := c.check("w1", r, true)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// Without --shared-paths no host path is used: only the network and
	// the timeout are bounded.
	r := base
	r.SkillDir = filepath.Join(root, "secret")
	if got := c.check("w1", r, false); got != "" {
		t.Errorf("scratch worker: %q", got)
	}
	// The zero ceiling: no host path, no network, any timeout.
	var none Ceiling
	if got := none.check("w1", shared.Request{SkillDir: "/srv/skill", Grant: shared.Grant{Timeout: 24 * time.Hour}}, false); got != "" {
		t.Errorf("zero ceiling, scratch: %q", got)
	}
	if got := none.check("w1", base, true); !strings.Contains(got, "allows no host path") {
		t.Errorf("zero ceiling, shared: %q", got)
	}
	if err := none.ParseNetwork([]string{"*.com"}); err == nil {
		t.Error("a wildcard over a top-level domain was taken")
	}
}
