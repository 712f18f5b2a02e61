package temporal

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
)

func TestSealer(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600)
	key, err := readKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSealer(key)
	in := []*commonpb.Payload{{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`{"secret":"sk-123"}`)}}
	sealed, err := s.Encode(in)
	if err != nil || bytes.Contains(sealed[0].Data, []byte("sk-123")) || string(sealed[0].Metadata["encoding"]) != sealedEncoding {
		t.Fatalf("sealed %+v %v", sealed, err)
	}
	out, err := s.Decode(sealed)
	if err != nil || string(out[0].Data) != `{"secret":"sk-123"}` || string(out[0].Metadata["encoding"]) != "json/plain" {
		t.Fatalf("opened %+v %v", out, err)
	}
	if _, err := s.Decode(in); err == nil {
		t.Error("an unsealed payload was accepted")
	}
	other, _ := newSealer(bytes.Repeat([]byte{1}, 32))
	if _, err := other.Decode(sealed); err == nil {
		t.Error("a payload opened with another key")
	}
	sealed[0].Data[len(sealed[0].Data)-1] ^= 1
	if _, err := s.Decode(sealed); err == nil {
		t.Error("a changed payload opened")
	}
	for _, bad := range []string{"short", strings.Repeat("zz", 32)} {
		os.WriteFile(keyFile, []byte(bad), 0o600)
		if _, err := readKey(keyFile); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}
