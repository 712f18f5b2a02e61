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
		SeccompNoMounts: Filter{{Code: 0x6, K: 0}},
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

func TestPolicyRoundTrip(t *testing.T) {
	for _, p := range []Policy{{}, {Network: true, View: &View{}}, fullPolicy()} {
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
