package kit

import (
	"reflect"
	"testing"
)

func TestWithEnv(t *testing.T) {
	got := WithEnv([]string{"A=1", "TMPDIR=/tmp", "B=2"}, "TMPDIR", "/private")
	if !reflect.DeepEqual(got, []string{"A=1", "B=2", "TMPDIR=/private"}) {
		t.Errorf("WithEnv = %q", got)
	}
}
