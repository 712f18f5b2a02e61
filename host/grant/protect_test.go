package grant

import (
	"reflect"
	"testing"
)

func TestProtect(t *testing.T) {
	on := map[string]bool{
		"/p/.git/hooks": true, "/p/.git/config": true, "/p/.bashrc": true, "/p/.claude": true,
		"/p/skills": true, "/p/vendor/.vscode": true,
	}
	exists := func(p string) bool { return on[p] }
	g := Grant{FSWrite: []string{"/p"}}
	got := Protect(g, []string{"/p/skills", "/elsewhere/skills"}, []string{"/p/.claude"}, exists)
	want := Protection{
		Existing: []string{"/p/.bashrc", "/p/.git/config", "/p/.git/hooks", "/p/skills"},
		Missing: []string{"/p/.bash_login", "/p/.bash_profile", "/p/.gitmodules", "/p/.idea", "/p/.mcp.json",
			"/p/.profile", "/p/.ssh", "/p/.vscode", "/p/.zprofile", "/p/.zshenv", "/p/.zshrc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Protect =\n%+v\nwant\n%+v", got, want)
	}
	if p := Protect(Grant{FSRead: []string{"/p"}}, []string{"/p/skills"}, nil, exists); len(p.Existing)+len(p.Missing) != 0 {
		t.Errorf("a read grant protects %+v; nothing is writable", p)
	}
}
