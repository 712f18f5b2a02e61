package confiner

import (
	"reflect"
	"strings"
	"testing"
)

func fullPolicy() Policy {
	return Policy{
		ABI: 6, RODirs: []string{"/usr", "/\xff\xfenot UTF-8"}, ROFiles: []string{"/etc/hosts"},
		RWDirs: []string{"/work"}, RWFiles: []string{"/work/x"}, Canonical: []string{"/skills/a"},
		Egress: &Route{Port: 3128, Target: "127.0.0.1:41234"},
		Limits: Limits{OpenFiles: 256, FileSize: 1 << 40, Processes: 64, Memory: 2 << 30}, NprocBase: 12,
		Cgroups: true, DropCaps: true,
		Seccomp:         Filter{{Code: 0x20, K: 4}, {Code: 0x15, Jt: 1, Jf: 2, K: 0xc000003e}, {Code: 0x6, K: 0x7fff0000}},
		SeccompNoMounts: Filter{{Code: 0x15, Jt: 1, Jf: 3, K: 0x50001}},
		View: &View{
			Binds: []Bind{
				{Path: "/usr", System: true},
				{Path: "/work", Write: true, Upper: "/stage/0/upper", Work: "/stage/0/work"},
				{Path: "/work/.git", Protect: true},
			},
			Devices: []string{"/dev/null", "/dev/urandom"}, TmpSize: 64 << 20, Dir: "/work",
		},
	}
}

// roundTripped are the policies TestPolicyRoundTrip carries; between them
// they set every field (TestRoundTripSetsEveryField).
func roundTripped() []Policy { return []Policy{{}, {Network: true, View: &View{}}, fullPolicy()} }

func TestPolicyRoundTrip(t *testing.T) {
	for _, p := range roundTripped() {
		data, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodePolicy(data)
		if err != nil {
			t.Fatalf("decode %+v: %v", p, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("round trip changed the policy:\n got %+v\nwant %+v", got, p)
		}
	}
}

// Encode and DecodePolicy name each field by hand: a field added to Policy
// (or to what it holds) and left out of them would be dropped on the way
// to the supervisor, and the run confined less than the plugin decided.
// This fails until the round-trip test sets the new field too.
func TestRoundTripSetsEveryField(t *testing.T) {
	set := map[string]bool{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
			return
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
			return
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(path+"[]", v.Index(i))
			}
		}
		if !v.IsZero() {
			set[path] = true
		}
	}
	var fields func(path string, t reflect.Type) []string
	fields = func(path string, t reflect.Type) []string {
		switch t.Kind() {
		case reflect.Pointer:
			return fields(path, t.Elem())
		case reflect.Struct:
			var out []string
			for i := 0; i < t.NumField(); i++ {
				out = append(out, fields(path+"."+t.Field(i).Name, t.Field(i).Type)...)
			}
			return out
		case reflect.Slice:
			if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer {
				return fields(path+"[]", e)
			}
		}
		return []string{path}
	}
	for _, p := range roundTripped() {
		walk("Policy", reflect.ValueOf(p))
	}
	for _, f := range fields("Policy", reflect.TypeOf(Policy{})) {
		if !set[f] {
			t.Errorf("no round-tripped policy sets %s: set it in fullPolicy, and carry it in Encode and DecodePolicy", f)
		}
	}
}

// A policy cut anywhere, of another version, or with a seccomp program of
// part of an instruction is refused, never misread.
func TestPolicyDamaged(t *testing.T) {
	data, err := fullPolicy().Encode()
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := DecodePolicy(data[:n]); err == nil {
			t.Errorf("a policy cut to %d of %d bytes was read without error", n, len(data))
		}
	}
	other := append([]byte(nil), data...)
	other[0] = policyVersion + 1
	if _, err := DecodePolicy(other); err == nil || !strings.Contains(err.Error(), "different builds") {
		t.Errorf("another version: err = %v", err)
	}
	odd := Policy{Seccomp: Filter{{Code: 6}}}
	b, _ := odd.Encode()
	// The filter's length byte follows ABI, the five lists, Network,
	// Egress, the five limits and the two booleans: make it 7.
	i := 1 + 1 + 5 + 1 + 1 + 5 + 2
	if b[i] != 8 {
		t.Fatalf("byte %d is %d, not the filter's length 8", i, b[i])
	}
	b[i] = 7
	if _, err := DecodePolicy(b); err == nil || !strings.Contains(err.Error(), "instructions") {
		t.Errorf("a filter of 7 bytes: err = %v", err)
	}
}

func FuzzDecodePolicy(f *testing.F) {
	data, _ := fullPolicy().Encode()
	f.Add(data)
	f.Add([]byte{policyVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePolicy(b)
		if err != nil {
			return
		}
		again, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		q, err := DecodePolicy(again)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("%x decoded as %+v decodes back as %+v (%v)", b, p, q, err)
		}
	})
}
