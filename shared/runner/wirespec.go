package runner

import (
	"encoding/binary"
	"fmt"
	"io"

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
const wireSpecVersion byte = 3

// writeTo encodes s on w as one frame: its length (4 bytes, big-endian),
// the version, then each field in order (package frame).
func (s wireSpec) writeTo(w io.Writer) error {
	b := make([]byte, 4, 4096)
	b = append(b, wireSpecVersion)
	b = frame.AppendStrings(b, s.Argv)
	b = frame.AppendStrings(b, s.Env)
	b = frame.AppendString(b, s.Dir)
	b = frame.AppendString(b, s.Confine)
	b = frame.AppendBytes(b, s.ConfinePayload)
	b = frame.AppendStrings(b, s.KeepTmp)
	for _, v := range []int64{int64(s.ExtraFDs), int64(s.TermBelow), s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory} {
		b = frame.AppendInt(b, v)
	}
	if len(b)-4 > maxWireSpec {
		return fmt.Errorf("spec of %d bytes is over %d", len(b)-4, maxWireSpec)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

// readWireSpec reads one frame written by writeTo.
func readWireSpec(r io.Reader) (wireSpec, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return wireSpec{}, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxWireSpec {
		return wireSpec{}, fmt.Errorf("spec of %d bytes is over %d", n, maxWireSpec)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return wireSpec{}, fmt.Errorf("spec cut short: %w", err)
	}
	if len(buf) == 0 || buf[0] != wireSpecVersion {
		v := byte(0)
		if len(buf) > 0 {
			v = buf[0]
		}
		return wireSpec{}, fmt.Errorf("a spec of version %d, but this binary reads version %d: the plugin and its supervisor binary (skillhost-supervisor-NAME beside it) come from different builds; install them together, or remove the supervisor binary", v, wireSpecVersion)
	}
	d := frame.NewDecoder(buf[1:])
	s := wireSpec{Argv: d.ReadStrings(), Env: d.ReadStrings(), Dir: d.ReadString(), Confine: d.ReadString()}
	s.ConfinePayload = d.ReadBytes()
	s.KeepTmp = d.ReadStrings()
	s.ExtraFDs, s.TermBelow = int(d.ReadInt()), int(d.ReadInt())
	s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory = d.ReadInt(), d.ReadInt(), d.ReadInt(), d.ReadInt()
	if err := d.Finish(); err != nil {
		return s, fmt.Errorf("spec: %w", err)
	}
	return s, nil
}
