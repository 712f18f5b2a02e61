package proxy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	g := newGuard([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	for _, c := range []struct {
		addr string
		why  string
	}{
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fd00:ec2::254", "metadata"},
		{"100.100.100.200", "metadata"},
		{"168.63.129.16", "metadata"},
		{"239.1.2.3", "multicast"},
		{"ff0e::1", "multicast"},
		{"64:ff9b::7f00:1", "loopback"},      // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", "link-local"}, // NAT64 of 169.254.169.254
		{"2002:7f00:1::", "loopback"},        // 6to4 of 127.0.0.1
		{"64:ff9b:1::1", "local-use NAT64"},  // where the IPv4 part sits is unknown
		{"10.1.2.3", "deny_addresses"},
		{"::ffff:10.1.2.3", "deny_addresses"},
		{"93.184.216.34", ""},
		{"2606:2800:220:1::1", ""},
	} {
		if got := g.refused(netip.MustParseAddr(c.addr)); c.why == "" && got != "" || !strings.Contains(got, c.why) {
			t.Errorf("refused(%s) = %q, want %q", c.addr, got, c.why)
		}
	}
	for a := range g.own {
		if g.refused(a) == "" {
			t.Errorf("the host's own address %s is not refused", a)
		}
	}
}
