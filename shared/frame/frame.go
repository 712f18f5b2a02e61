// Package frame encodes the flat records a plugin hands the lean
// supervisor binary it starts for each run (the run's spec, a confiner's
// policy): strings and byte slices as their length (uvarint) and bytes, so
// no string needs to be valid UTF-8, integers as varints and booleans as
// one byte. Records carry no field names; a record's writer and reader
// agree on the order, and a version byte of the record's own says when
// they do not.
//
// It is not gob: gob's package initialisation and its first decode of a
// type cost a lean supervisor binary more than the rest of its start.
package frame

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxCount bounds the length of a list a Decoder reads, far above any
// argv, environment or path list.
const MaxCount = 1 << 20

// ErrShort is a record that ends before its fields do.
var ErrShort = errors.New("cut short")

// AppendBytes appends v as its length and bytes.
func AppendBytes(b, v []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(v))), v...) }

// AppendString appends s as AppendBytes does.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// AppendCount appends the length of a list whose items follow.
func AppendCount(b []byte, n int) []byte { return binary.AppendUvarint(b, uint64(n)) }

// AppendStrings appends the number of strings, then each.
func AppendStrings(b []byte, v []string) []byte {
	b = AppendCount(b, len(v))
	for _, s := range v {
		b = AppendString(b, s)
	}
	return b
}

// AppendInt appends v as a varint.
func AppendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBool appends v as one byte, 0 or 1.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// A Decoder reads fields in the order they were appended. After the first
// error every read returns the zero value and Err keeps that error, so a
// record is read field by field and checked once.
type Decoder struct {
	buf []byte
	err error
}

// NewDecoder reads the fields in b. The byte slices it returns share b's
// memory.
func NewDecoder(b []byte) *Decoder { return &Decoder{buf: b} }

// Err is the first error met, if any.
func (d *Decoder) Err() error { return d.err }

// Finish is Err, or an error if bytes are left after the last field.
func (d *Decoder) Finish() error {
	if d.err == nil && len(d.buf) > 0 {
		d.err = fmt.Errorf("%d bytes after the last field", len(d.buf))
	}
	return d.err
}

func (d *Decoder) fail() {
	if d.err == nil {
		d.err = ErrShort
	}
}

func (d *Decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// ReadInt reads an AppendInt: a varint is the zigzag of a uvarint.
func (d *Decoder) ReadInt() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// ReadBool reads an AppendBool; a byte other than 0 or 1 is an error.
func (d *Decoder) ReadBool() bool {
	if d.err != nil {
		return false
	}
	if len(d.buf) == 0 || d.buf[0] > 1 {
		if len(d.buf) > 0 {
			d.err = fmt.Errorf("a boolean of %d", d.buf[0])
		}
		d.fail()
		return false
	}
	v := d.buf[0] == 1
	d.buf = d.buf[1:]
	return v
}

// ReadBytes reads an AppendBytes: nil for an empty field, as gob gave.
func (d *Decoder) ReadBytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) {
		d.fail()
		return nil
	}
	v := d.buf[:n:n]
	d.buf = d.buf[n:]
	if n == 0 {
		return nil
	}
	return v
}

// ReadString reads an AppendString.
func (d *Decoder) ReadString() string { return string(d.ReadBytes()) }

// ReadCount reads an AppendCount. Each item of a list takes a byte at
// least, so a count above the bytes left, or above MaxCount, is an error
// (and 0 is returned).
func (d *Decoder) ReadCount() int {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.buf)) || n > MaxCount {
		d.fail()
		return 0
	}
	return int(n)
}

// ReadStrings reads an AppendStrings: nil for an empty list.
func (d *Decoder) ReadStrings() []string {
	n := d.ReadCount()
	if n == 0 {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = d.ReadString()
	}
	return v
}
