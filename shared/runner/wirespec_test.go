package runner

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

func TestWireSpecRoundTrip(t *testing.T) {
	for _, s := range []wireSpec{
		{},
		{Argv: []string{"/bin/sh", "-c", "echo hi"}, Env: []string{"A=1", "B="}, Dir: "/tmp"},
		{Argv: []string{"\xff\xfe not UTF-8", ""}, Env: []string{"X=\x00\x01"}, Confine: "landlock",
			ConfinePayload: []byte{0, 1, 2, 255}, KeepTmp: "/skillhost-0/",
			ExtraFDs: 3, TermBelow: 2, Limits: shared.Limits{OpenFiles: 64, FileSize: 1 << 40, Processes: -1, Memory: 1 << 30}},
		{Argv: []string{strings.Repeat("a", 1<<20)}},
	} {
		var buf bytes.Buffer
		if err := s.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("next frame") // a reader stops at the frame's end
		got, err := readWireSpec(&buf)
		if err != nil {
			t.Fatalf("read %+v: %v", s, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip changed the spec:\n got %+v\nwant %+v", got, s)
		}
		if buf.String() != "next frame" {
			t.Errorf("read past the frame: %q left", buf.String())
		}
	}
}

func TestWireSpecDamaged(t *testing.T) {
	var buf bytes.Buffer
	s := wireSpec{Argv: []string{"/bin/true"}, Env: []string{"A=1"}, Confine: "x", ConfinePayload: []byte("{}")}
	if err := s.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	for n := 0; n < len(full); n++ {
		if _, err := readWireSpec(bytes.NewReader(full[:n])); err == nil {
			t.Errorf("a frame cut to %d of %d bytes was read without error", n, len(full))
		}
	}
	// A frame that claims more than the bound is refused before reading it.
	if _, err := readWireSpec(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff})); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("oversized frame: err = %v", err)
	}
	// Lengths inside the frame that run past it are errors, not panics.
	bad := append([]byte{0, 0, 0, 4}, wireSpecVersion, 0x05, 0xff, 0x01)
	if _, err := readWireSpec(bytes.NewReader(bad)); err == nil {
		t.Error("a frame whose lengths run past it was read without error")
	}
	// A frame of another version is refused, naming the remedy.
	other := append([]byte(nil), full...)
	other[4] = wireSpecVersion + 1
	if _, err := readWireSpec(bytes.NewReader(other)); err == nil || !strings.Contains(err.Error(), "different builds") {
		t.Errorf("a frame of another version: err = %v", err)
	}
}

func FuzzReadWireSpec(f *testing.F) {
	var buf bytes.Buffer
	s := wireSpec{Argv: []string{"/bin/true"}, Env: []string{"A=1"}, Confine: "x", ConfinePayload: []byte("{}"), KeepTmp: "/t/", ExtraFDs: 1}
	if err := s.writeTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, wireSpecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := readWireSpec(bytes.NewReader(b))
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := s.writeTo(&again); err != nil {
			t.Fatal(err)
		}
		if back, err := readWireSpec(&again); err != nil || !reflect.DeepEqual(back, s) {
			t.Fatalf("%x read as %+v reads back as %+v (%v)", b, s, back, err)
		}
	})
}

func TestWireStatusRoundTrip(t *testing.T) {
	for _, st := range []wireStatus{
		{},
		{InitPid: 4242},
		{ExitCode: -1, Signal: "SIGKILL", SetupError: "landlock: \xff not UTF-8", Isolated: true, IsolationError: "EPERM"},
		{ExitCode: 3, Isolated: true, Usage: &Usage{UserTime: time.Millisecond, SystemTime: 2 * time.Second, MaxRSS: 1 << 33},
			Left: []LeftFile{{Path: "/tmp/a/\xfe", Mode: 0o640, Data: []byte{0, 1, 255}}, {Path: "/tmp/a/empty", Mode: 0o600}}},
		{Left: []LeftFile{{Path: "/tmp/big/f", Mode: 0o644, Data: bytes.Repeat([]byte("x"), MaxLeftBytes)}}},
	} {
		var buf bytes.Buffer
		if err := st.writeTo(&buf); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("next frame")
		got, err := readWireStatus(&buf)
		if err != nil {
			t.Fatalf("read %+v: %v", st, err)
		}
		if !reflect.DeepEqual(got, st) {
			t.Errorf("round trip changed the status:\n got %+v\nwant %+v", got, st)
		}
		if buf.String() != "next frame" {
			t.Errorf("read past the frame: %q left", buf.String())
		}
	}
}

func TestWireStatusDamaged(t *testing.T) {
	var buf bytes.Buffer
	st := wireStatus{ExitCode: 1, Signal: "SIGTERM", Left: []LeftFile{{Path: "/tmp/a/b", Data: []byte("b")}}, Usage: &Usage{MaxRSS: 1}}
	if err := st.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	for n := 0; n < len(full); n++ {
		if _, err := readWireStatus(bytes.NewReader(full[:n])); err == nil {
			t.Errorf("a frame cut to %d of %d bytes was read without error", n, len(full))
		}
	}
	other := append([]byte(nil), full...)
	other[4] = wireSpecVersion - 1
	if _, err := readWireStatus(bytes.NewReader(other)); err == nil || !strings.Contains(err.Error(), "a status of version") {
		t.Errorf("a frame of another version: err = %v", err)
	}
	big := wireStatus{Left: []LeftFile{{Data: make([]byte, maxWireStatus)}}}
	if err := big.writeTo(io.Discard); err == nil {
		t.Error("a status over the bound was written")
	}
}

func FuzzReadWireStatus(f *testing.F) {
	var buf bytes.Buffer
	st := wireStatus{ExitCode: 2, Isolated: true, Left: []LeftFile{{Path: "/tmp/a/b", Mode: 0o644, Data: []byte("b")}}, Usage: &Usage{UserTime: 5}}
	if err := st.writeTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, wireSpecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := readWireStatus(bytes.NewReader(b))
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := st.writeTo(&again); err != nil {
			t.Fatal(err)
		}
		if back, err := readWireStatus(&again); err != nil || !reflect.DeepEqual(back, st) {
			t.Fatalf("%x read as %+v reads back as %+v (%v)", b, st, back, err)
		}
	})
}
