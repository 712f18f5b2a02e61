package wire

import (
	"bytes"
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

func TestFilesRoundTripWithinTheLimit(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3*shared.MaxChunk+5)
	files := []shared.File{{Path: "/w/a", Mode: 0o755, Data: big}, {Path: "/w/empty"}, {Path: "/w/b", Data: []byte("b")}}
	for _, tt := range []struct {
		limit     int64
		sent      int
		truncated bool
	}{
		{limit: 1 << 30, sent: 3},
		{limit: int64(len(big)), sent: 2, truncated: true},
		{limit: 10, sent: 0, truncated: true},
		{limit: 0, sent: 0, truncated: true},
	} {
		recv := fileReceiver{limit: tt.limit}
		chunks := 0
		infos, truncated, err := sendFiles(files, tt.limit, func(f *executorv1.File) error {
			chunks++
			if len(f.GetData()) > shared.MaxChunk {
				t.Errorf("a chunk of %d bytes", len(f.GetData()))
			}
			return recv.add(f)
		})
		if err != nil || truncated != tt.truncated || len(infos) != tt.sent {
			t.Errorf("limit %d: sent %d, truncated %v, %v; want %d, %v", tt.limit, len(infos), truncated, err, tt.sent, tt.truncated)
			continue
		}
		got, err := recv.check(infos)
		if err != nil || len(got) != tt.sent {
			t.Errorf("limit %d: received %d files, %v", tt.limit, len(got), err)
			continue
		}
		for i, f := range got {
			if f.Path != files[i].Path || f.Mode != files[i].Mode || !bytes.Equal(f.Data, files[i].Data) {
				t.Errorf("limit %d: file %d changed on the way", tt.limit, i)
			}
		}
		if tt.sent == 3 && chunks != 6 {
			t.Errorf("%d chunks, want 4 for the big file and one for each other", chunks)
		}
	}
}

// The host holds no more than it asked for, and only files that arrived
// as the plugin listed them.
func TestReceiverRefusesWhatItWasNotPromised(t *testing.T) {
	recv := fileReceiver{limit: 4}
	if err := recv.add(&executorv1.File{Path: []byte("/w/a"), Data: []byte("12345"), Last: true}); err == nil || !strings.Contains(err.Error(), "more than the 4 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	recv = fileReceiver{limit: 100}
	_ = recv.add(&executorv1.File{Path: []byte("/w/a"), Data: []byte("12")})
	if err := recv.add(&executorv1.File{Path: []byte("/w/b"), Data: []byte("3"), Last: true}); err == nil {
		t.Error("files interleaved")
	}
	recv = fileReceiver{limit: 100}
	_ = recv.add(&executorv1.File{Path: []byte("/w/a"), Data: []byte("12"), Last: true})
	for _, infos := range [][]*executorv1.FileInfo{
		nil,
		{{Path: []byte("/w/a"), Size: 2, Sha256: strings.Repeat("0", 64)}},
		{{Path: []byte("/w/b"), Size: 2}},
	} {
		if _, err := recv.check(infos); err == nil {
			t.Errorf("files that do not match the list %v were accepted", infos)
		}
	}
}
