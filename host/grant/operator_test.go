package grant

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestComputeWithOperator(t *testing.T) {
	root := tree(t)
	env := Env{Cwd: root + "/work", Home: root + "/secret"}
	yes, no := true, false
	ceiling := Ceiling{FSRead: []string{"."}, FSWrite: []string{"out"}, Network: true, Timeout: 30 * time.Second}
	declared := Declared{FSRead: []string{"data"}, Timeout: DefaultTimeout, Trust: TrustExternal}
	tests := []struct {
		name     string
		declared Declared
		op       Operator
		ceiling  Ceiling
		env      Env // when set, instead of the default
		want     Grant
		origins  Origins
		warning  string
	}{
		{
			name: "declared only", declared: declared, ceiling: ceiling,
			want:    Grant{FSRead: []string{root + "/work/data"}, Timeout: 30 * time.Second, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{root + "/work/data": {FromSkill}}, FSWrite: map[string][]string{}, Network: FromDefault, Timeout: FromCeiling},
		},
		{
			name: "operator paths add to the declaration and are clamped", declared: declared, ceiling: ceiling,
			op: Operator{FSRead: []string{"data", "/etc"}, FSWrite: []string{"out", "data"}, Network: &yes, Timeout: 10 * time.Second},
			want: Grant{FSRead: []string{root + "/work/data"}, FSWrite: []string{root + "/work/out"}, Network: true,
				Timeout: 10 * time.Second, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{root + "/work/data": {FromSkill, FromOperator}},
				FSWrite: map[string][]string{root + "/work/out": {FromOperator}}, Network: FromOperator, Timeout: FromOperator},
			warning: "skills.grants.x: fs_read /etc is outside the ceiling",
		},
		{
			name: "operator network is clamped by the ceiling", declared: declared,
			ceiling: Ceiling{FSRead: []string{"."}, Timeout: 30 * time.Second},
			op:      Operator{Network: &yes, Timeout: time.Hour},
			want:    Grant{FSRead: []string{root + "/work/data"}, Timeout: 30 * time.Second, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{root + "/work/data": {FromSkill}}, FSWrite: map[string][]string{}, Network: FromCeiling, Timeout: FromCeiling},
		},
		{
			name: "operator can withdraw network", declared: Declared{Network: true, Timeout: DefaultTimeout}, ceiling: ceiling,
			op:      Operator{Network: &no},
			want:    Grant{Timeout: 30 * time.Second, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{}, FSWrite: map[string][]string{}, Network: FromOperator, Timeout: FromCeiling},
		},
		{
			name: "workspace read-write is granted even beyond the write ceiling", declared: declared,
			ceiling: Ceiling{FSRead: []string{"."}, Timeout: 30 * time.Second},
			op:      Operator{Workspace: WorkspaceReadWrite},
			want: Grant{FSRead: []string{root + "/work/data", root + "/work"}, FSWrite: []string{root + "/work"},
				Timeout: 30 * time.Second, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{root + "/work/data": {FromSkill}, root + "/work": {FromWorkspace}},
				FSWrite: map[string][]string{root + "/work": {FromWorkspace}}, Network: FromDefault, Timeout: FromCeiling},
		},
		{
			name: "workspace read", ceiling: Ceiling{Timeout: 90 * time.Second},
			declared: Declared{Timeout: DefaultTimeout},
			op:       Operator{Workspace: WorkspaceRead},
			want:     Grant{FSRead: []string{root + "/work"}, Timeout: DefaultTimeout, Trust: TrustExternal},
			origins:  Origins{FSRead: map[string][]string{root + "/work": {FromWorkspace}}, FSWrite: map[string][]string{}, Network: FromDefault, Timeout: FromDefault},
		},
		{
			name: "no workspace at the home directory", ceiling: Ceiling{Timeout: 90 * time.Second},
			declared: Declared{Timeout: DefaultTimeout}, env: Env{Cwd: root + "/secret", Home: root + "/secret"},
			op:      Operator{Workspace: WorkspaceReadWrite},
			want:    Grant{Timeout: DefaultTimeout, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{}, FSWrite: map[string][]string{}, Network: FromDefault, Timeout: FromDefault},
			warning: "is / or holds the home directory; not granted",
		},
		{
			name: "no workspace above the home directory", ceiling: Ceiling{Timeout: 90 * time.Second},
			declared: Declared{Timeout: DefaultTimeout}, env: Env{Cwd: root, Home: root + "/secret"},
			op:      Operator{Workspace: WorkspaceRead},
			want:    Grant{Timeout: DefaultTimeout, Trust: TrustExternal},
			origins: Origins{FSRead: map[string][]string{}, FSWrite: map[string][]string{}, Network: FromDefault, Timeout: FromDefault},
			warning: "not granted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ComputeWith("x", tt.declared, tt.op, tt.ceiling, env)
			if tt.env.Cwd != "" {
				r = ComputeWith("x", tt.declared, tt.op, tt.ceiling, tt.env)
			}
			g, o, warnings := r.Grant, r.Origins, r.Warnings
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("grant = %+v, want %+v", g, tt.want)
			}
			if !reflect.DeepEqual(o, tt.origins) {
				t.Errorf("origins = %+v, want %+v", o, tt.origins)
			}
			joined := strings.Join(warnings, "\n")
			if tt.warning == "" && joined != "" || !strings.Contains(joined, tt.warning) {
				t.Errorf("warnings = %q, want %q", warnings, tt.warning)
			}
		})
	}
}

func TestParseWorkspace(t *testing.T) {
	for in, want := range map[string]string{"": WorkspaceNone, "none": WorkspaceNone, "read": WorkspaceRead, "RW": WorkspaceReadWrite, "read-write": WorkspaceReadWrite} {
		if got, err := ParseWorkspace(in); err != nil || got != want {
			t.Errorf("ParseWorkspace(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseWorkspace("all"); err == nil || !strings.Contains(err.Error(), `"all" is not none, read or read-write`) {
		t.Errorf("ParseWorkspace(all) error = %v", err)
	}
}
