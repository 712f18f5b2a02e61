package yamlnode

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestDerefAndIsNull(t *testing.T) {
	var doc yaml.Node
	src := "a: &x [1]\nb: *x\nc: null\nd: ~\ne:\nf: \"null\"\ng: !!null ''\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	val := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		val[m.Content[i].Value] = m.Content[i+1]
	}
	if got := Deref(val["b"]); got != val["a"] {
		t.Errorf("Deref(*x) = %v, want the anchored list", got)
	}
	if got := Deref(val["a"]); got != val["a"] {
		t.Error("Deref changed a node that is not an alias")
	}
	if Deref(nil) != nil {
		t.Error("Deref(nil) is not nil")
	}
	for key, want := range map[string]bool{"a": false, "c": true, "d": true, "e": true, "f": false, "g": true} {
		if got := IsNull(val[key]); got != want {
			t.Errorf("IsNull(%s) = %v, want %v", key, got, want)
		}
	}
}
