package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/skillhost/skillhost/shared/frame"
)

// maxWireSpec bounds an encoded wireSpec: far above what the kernel lets a
// command's argv and environment be, with room for a confiner's payload.
const maxWireSpec = 64 << 20

// wireSpecVersion opens every frame. A plugin and its lean supervisor
// binary are separate files that could come from different builds: one
// that reads a frame of another version says so instead of misreading it.
// Version 2: a confiner's payload changed with it (the Landlock policy
// left gob), so a supervisor binary of version 1 is told, not confused.
// Version 3: supervisors start with a coarse timer slack and must give the
// command the runner's back (slack_linux.go), which one of version 2 would
// not do.
// Version 4: KeepTmp is one string (keepSet), not a list, and the
// supervisor's status is a frame of this kind too, not JSON.
const wireSpecVersion byte = 4

// writeTo encodes s on w as one frame: its length (4 bytes, big-endian),
// the version, then each field in order (package frame).
func (s wireSpec) writeTo(w io.Writer) error {
	b := newFrame(4096)
	b = frame.AppendStrings(b, s.Argv)
	b = frame.AppendStrings(b, s.Env)
	b = frame.AppendString(b, s.Dir)
	b = frame.AppendString(b, s.Confine)
	b = frame.AppendBytes(b, s.ConfinePayload)
	b = frame.AppendString(b, s.KeepTmp)
	for _, v := range []int64{int64(s.ExtraFDs), int64(s.TermBelow), s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory} {
		b = frame.AppendInt(b, v)
	}
	return writeFrame(w, b, "spec", maxWireSpec)
}

// newFrame begins a frame: room for its length, then the version.
func newFrame(capacity int) []byte {
	return append(make([]byte, 4, capacity), wireSpecVersion)
}

// writeFrame puts the length at the head of a frame newFrame began, and
// writes it whole; what names it in errors.
func writeFrame(w io.Writer, b []byte, what string, limit int) error {
	if len(b)-4 > limit {
		return fmt.Errorf("%s of %d bytes is over %d: %w", what, len(b)-4, limit, errOverBound)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

// readWireSpec reads one frame written by writeTo.
func readWireSpec(r io.Reader) (wireSpec, error) {
	buf, err := readFrame(r, "spec", maxWireSpec)
	if err != nil {
		return wireSpec{}, err
	}
	d := frame.NewDecoder(buf)
	s := wireSpec{Argv: d.ReadStrings(), Env: d.ReadStrings(), Dir: d.ReadString(), Confine: d.ReadString()}
	s.ConfinePayload = d.ReadBytes()
	s.KeepTmp = d.ReadString()
	s.ExtraFDs, s.TermBelow = int(d.ReadInt()), int(d.ReadInt())
	s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory = d.ReadInt(), d.ReadInt(), d.ReadInt(), d.ReadInt()
	if err := d.Finish(); err != nil {
		return s, fmt.Errorf("spec: %w", err)
	}
	return s, nil
}

// remedyBuilds is what to do about frames of another version.
const remedyBuilds = "the plugin and its supervisor binary (skillhost-supervisor-NAME beside it) come from different builds; install them together, or remove the supervisor binary"

// errOverBound is writeFrame's error for a frame over its bound; nothing of
// it was written.
var errOverBound = errors.New("over its bound")

// readFrame reads one frame of writeTo's kind and returns what follows its
// version byte; what names the frame in errors.
func readFrame(r io.Reader, what string, limit uint32) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	if head[0] == '{' {
		// A JSON status, as supervisors before version 4 wrote.
		return nil, fmt.Errorf("a %s in JSON, but this binary reads version %d frames: %s", what, wireSpecVersion, remedyBuilds)
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > limit {
		return nil, fmt.Errorf("%s of %d bytes is over %d", what, n, limit)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("%s cut short: %w", what, err)
	}
	if len(buf) == 0 || buf[0] != wireSpecVersion {
		v := byte(0)
		if len(buf) > 0 {
			v = buf[0]
		}
		return nil, fmt.Errorf("a %s of version %d, but this binary reads version %d: %s", what, v, wireSpecVersion, remedyBuilds)
	}
	return buf[1:], nil
}

// maxWireStatus bounds an encoded wireStatus: the files a run left in its
// /tmp, their paths (a path is at most 4,096 bytes) and room for the rest.
const maxWireStatus = MaxLeftBytes + MaxLeftFiles*(4096+32) + 1<<20

// writeTo encodes st on w as one frame, as wireSpec's: the supervisor's
// status was JSON, whose encoder a fresh supervisor built by reflection
// for each run (0.05 ms).
func (st wireStatus) writeTo(w io.Writer) error {
	b := newFrame(256)
	b = frame.AppendInt(b, int64(st.InitPid))
	b = frame.AppendInt(b, int64(st.ExitCode))
	b = frame.AppendString(b, st.Signal)
	b = frame.AppendString(b, st.SetupError)
	b = frame.AppendBool(b, st.Isolated)
	b = frame.AppendString(b, st.IsolationError)
	b = frame.AppendCount(b, len(st.Left))
	for _, f := range st.Left {
		b = frame.AppendString(b, f.Path)
		b = frame.AppendInt(b, int64(f.Mode))
		b = frame.AppendBytes(b, f.Data)
	}
	b = frame.AppendBool(b, st.Usage != nil)
	if u := st.Usage; u != nil {
		b = frame.AppendInt(b, int64(u.UserTime))
		b = frame.AppendInt(b, int64(u.SystemTime))
		b = frame.AppendInt(b, u.MaxRSS)
	}
	return writeFrame(w, b, "status", maxWireStatus)
}

// sendStatus writes st on w. A status over the frame's bound (which the
// bounds of left files keep it under) goes without its left files rather
// than not at all, which would read as a killed run.
func sendStatus(w io.Writer, st wireStatus) {
	if err := st.writeTo(w); errors.Is(err, errOverBound) {
		st.Left = nil
		_ = st.writeTo(w)
	}
}

// readWireStatus reads one frame written by wireStatus.writeTo.
func readWireStatus(r io.Reader) (wireStatus, error) {
	buf, err := readFrame(r, "status", maxWireStatus)
	if err != nil {
		return wireStatus{}, err
	}
	d := frame.NewDecoder(buf)
	st := wireStatus{InitPid: int(d.ReadInt()), ExitCode: int(d.ReadInt()), Signal: d.ReadString(), SetupError: d.ReadString()}
	st.Isolated = d.ReadBool()
	st.IsolationError = d.ReadString()
	if n := d.ReadCount(); n > 0 {
		st.Left = make([]LeftFile, n)
		for i := range st.Left {
			st.Left[i] = LeftFile{Path: d.ReadString(), Mode: uint32(d.ReadInt()), Data: d.ReadBytes()}
		}
	}
	if d.ReadBool() {
		st.Usage = &Usage{UserTime: time.Duration(d.ReadInt()), SystemTime: time.Duration(d.ReadInt()), MaxRSS: d.ReadInt()}
	}
	if err := d.Finish(); err != nil {
		return st, fmt.Errorf("status: %w", err)
	}
	return st, nil
}
