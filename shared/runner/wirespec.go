package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxWireSpec bounds an encoded wireSpec: far above what the kernel lets a
// command's argv and environment be, with room for a confiner's payload;
// maxWireStrings bounds each of its lists.
const (
	maxWireSpec    = 64 << 20
	maxWireStrings = 1 << 20
)

// wireSpecVersion opens every frame. A plugin and its lean supervisor
// binary are separate files that could come from different builds: one
// that reads a frame of another version says so instead of misreading it.
const wireSpecVersion byte = 1

// writeTo encodes s on w as one frame: its length (4 bytes, big-endian),
// the version, then each field in order, strings and byte slices as their length
// (uvarint) and bytes, so that no string needs to be valid UTF-8. It is
// not gob, whose package initialisation and first decode of a type cost a
// lean supervisor binary more than the rest of its start.
func (s wireSpec) writeTo(w io.Writer) error {
	b := make([]byte, 4, 4096)
	b = append(b, wireSpecVersion)
	b = appendStrings(b, s.Argv)
	b = appendStrings(b, s.Env)
	b = appendBytes(b, []byte(s.Dir))
	b = appendBytes(b, []byte(s.Confine))
	b = appendBytes(b, s.ConfinePayload)
	b = appendStrings(b, s.KeepTmp)
	for _, v := range []int64{int64(s.ExtraFDs), int64(s.TermBelow), s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory} {
		b = binary.AppendVarint(b, v)
	}
	if len(b)-4 > maxWireSpec {
		return fmt.Errorf("spec of %d bytes is over %d", len(b)-4, maxWireSpec)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	_, err := w.Write(b)
	return err
}

func appendBytes(b, v []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(v))), v...) }

func appendStrings(b []byte, v []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for _, s := range v {
		b = appendBytes(b, []byte(s))
	}
	return b
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
	d := specDecoder{buf: buf[1:]}
	s := wireSpec{Argv: d.strings(), Env: d.strings(), Dir: string(d.bytes()), Confine: string(d.bytes())}
	s.ConfinePayload = d.bytes()
	s.KeepTmp = d.strings()
	s.ExtraFDs, s.TermBelow = int(d.int()), int(d.int())
	s.Limits.OpenFiles, s.Limits.FileSize, s.Limits.Processes, s.Limits.Memory = d.int(), d.int(), d.int(), d.int()
	if d.err == nil && len(d.buf) > 0 {
		d.err = fmt.Errorf("%d bytes after the spec", len(d.buf))
	}
	return s, d.err
}

var errSpecShort = errors.New("spec cut short")

// specDecoder reads the fields of a frame; after the first error it
// returns zero values and keeps that error.
type specDecoder struct {
	buf []byte
	err error
}

func (d *specDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errSpecShort
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *specDecoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errSpecShort
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// bytes returns a field's bytes, nil for an empty one (as gob did).
func (d *specDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) {
		if d.err == nil {
			d.err = errSpecShort
		}
		return nil
	}
	v := d.buf[:n:n]
	d.buf = d.buf[n:]
	if n == 0 {
		return nil
	}
	return v
}

func (d *specDecoder) strings() []string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) || n > maxWireStrings { // each string takes a byte at least
		if d.err == nil {
			d.err = errSpecShort
		}
		return nil
	}
	if n == 0 {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = string(d.bytes())
	}
	return v
}
