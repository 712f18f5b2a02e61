package landlock

import (
	"testing"

	"github.com/skillhost/skillhost/shared"
)

func TestPrivateTmp(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  shared.Request
		want bool
	}{
		{"no grant", shared.Request{SkillDir: "/skills/a"}, true},
		{"a project beneath /tmp", shared.Request{SkillDir: "/skills/a", Grant: shared.Grant{FSWrite: []string{"/tmp/project"}}}, true},
		{"a name that only starts like /tmp", shared.Request{Grant: shared.Grant{FSRead: []string{"/tmpfoo"}}}, true},
		{"a workspace of /tmp, read", shared.Request{Grant: shared.Grant{FSRead: []string{"/home/u", "/tmp"}}}, false},
		{"a workspace of /tmp, written", shared.Request{Grant: shared.Grant{FSWrite: []string{"/tmp"}}}, false},
		{"a grant of /", shared.Request{Grant: shared.Grant{FSRead: []string{"/"}}}, false},
		{"the skill in /tmp itself", shared.Request{SkillDir: "/tmp"}, false},
		{"an interpreter path of /", shared.Request{ExecPaths: []string{"/"}}, false},
	} {
		if got := privateTmp(tc.req); got != tc.want {
			t.Errorf("%s: privateTmp = %v, want %v", tc.name, got, tc.want)
		}
	}
}
