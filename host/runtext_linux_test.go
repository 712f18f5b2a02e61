package host

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testpty"
)

// A script's escape sequences reach a terminal shown, not acted on (OSC 52
// would set the clipboard, OSC 0 the title, CSI 8m hide text); a pipe gets
// the exact bytes.
func TestWriteTextSanitizesForTerminals(t *testing.T) {
	hostile := "copy this\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;PWNED\x07\x1b[8mhidden\x1b[0m done\n"
	r := &RunReport{}
	// Cut inside the OSC, as output arrives in chunks.
	r.chunks = [][]byte{[]byte(hostile[:14]), []byte(hostile[14:])}

	master, slave := testpty.Open(t)
	if err := r.WriteText(slave); err != nil {
		t.Fatal(err)
	}
	master.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	var got []byte
	for !bytes.Contains(got, []byte("done")) {
		n, err := master.Read(buf)
		if err != nil {
			t.Fatalf("read terminal: %v (so far %q)", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if bytes.ContainsRune(got, 0x1b) || bytes.ContainsRune(got, 0x07) {
		t.Errorf("raw control bytes reached the terminal: %q", got)
	}
	if !strings.Contains(string(got), `\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`) {
		t.Errorf("terminal shows %q; want the OSC 52 made visible", got)
	}

	r2, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	go func() { r.WriteText(w); w.Close() }()
	var piped bytes.Buffer
	piped.ReadFrom(r2)
	if piped.String() != hostile {
		t.Errorf("a pipe got %q, want the exact bytes", piped.String())
	}
}
