package frame

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type record struct {
	s    string
	list []string
	b    []byte
	i    int64
	ok   bool
}

func (r record) append(b []byte) []byte {
	b = AppendString(b, r.s)
	b = AppendStrings(b, r.list)
	b = AppendBytes(b, r.b)
	b = AppendInt(b, r.i)
	return AppendBool(b, r.ok)
}

func read(b []byte) (record, error) {
	d := NewDecoder(b)
	r := record{s: d.ReadString(), list: d.ReadStrings(), b: d.ReadBytes(), i: d.ReadInt(), ok: d.ReadBool()}
	return r, d.Finish()
}

func TestRoundTrip(t *testing.T) {
	for _, r := range []record{
		{},
		{s: "\xff\xfe not UTF-8", list: []string{"", "a", "\x00"}, b: []byte{0, 255}, i: -1 << 62, ok: true},
		{s: strings.Repeat("x", 1<<16), i: 1<<63 - 1},
	} {
		got, err := read(r.append(nil))
		if err != nil {
			t.Fatalf("read %+v: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
}

// A record cut anywhere, a list longer than the record, a boolean that is
// neither, and bytes left over are errors, never panics.
func TestDamaged(t *testing.T) {
	full := record{s: "abc", list: []string{"d", "e"}, b: []byte("f"), i: 300, ok: true}.append(nil)
	for n := 0; n < len(full); n++ {
		if _, err := read(full[:n]); !errors.Is(err, ErrShort) {
			t.Errorf("cut to %d of %d bytes: err = %v, want ErrShort", n, len(full), err)
		}
	}
	if _, err := read(append(full, 0)); err == nil || !strings.Contains(err.Error(), "after the last field") {
		t.Errorf("a byte left over: err = %v", err)
	}
	bad := append([]byte(nil), full...)
	bad[len(bad)-1] = 2
	if _, err := read(bad); err == nil || !strings.Contains(err.Error(), "boolean") {
		t.Errorf("a boolean of 2: err = %v", err)
	}
	if _, err := read([]byte{0, 0xff, 0xff, 0x03}); !errors.Is(err, ErrShort) {
		t.Errorf("a list longer than the record: err = %v", err)
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add(record{s: "abc", list: []string{"d"}, b: []byte("f"), i: 3, ok: true}.append(nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := read(b)
		if err != nil {
			return
		}
		// What was read writes and reads back the same (a varint may
		// have more than one encoding, so not byte for byte).
		again, err := read(r.append(nil))
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%x read as %+v reads back as %+v (%v)", b, r, again, err)
		}
	})
}
