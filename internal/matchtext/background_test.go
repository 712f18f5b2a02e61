package matchtext

import (
	"strings"
	"testing"
)

func TestDefaultBackground(t *testing.T) {
	bg := DefaultBackground()
	if len(bg) != 1990 {
		t.Errorf("%d background messages, want 1990", len(bg))
	}
	for i, m := range bg {
		if m == "" || strings.HasPrefix(m, "#") || strings.TrimSpace(m) != m {
			t.Fatalf("message %d is %q", i, m)
		}
	}
	text := WriteBackground(bg)
	if text != builtinBackground {
		t.Error("WriteBackground(DefaultBackground()) is not the built-in file")
	}
}
