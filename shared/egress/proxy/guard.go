package proxy

import (
	"net"
	"net/netip"
)

// metadata are the cloud instance-metadata endpoints that are not already
// link-local (AWS's IPv6 one, Alibaba's and Azure's wire server).
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"),
}

// Ranges that embed an IPv4 address in an IPv6 one: NAT64 (the
// well-known prefix; the local-use one is refused whole) and 6to4.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	broadcast  = netip.MustParseAddr("255.255.255.255")
)

// guard refuses the addresses no allowed name may resolve to.
type guard struct {
	own  map[netip.Addr]bool
	deny []netip.Prefix
}

// newGuard reads the host's own interface addresses once: a name that
// resolves to one of them would reach services listening on the host.
func newGuard(deny []netip.Prefix) *guard {
	g := &guard{own: map[netip.Addr]bool{}, deny: deny}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					g.own[ip.Unmap()] = true
				}
			}
		}
	}
	return g
}

// refused says why a may not be dialled, or "" if it may. An IPv4 address
// written as IPv4-mapped IPv6, NAT64 or 6to4 is judged as the IPv4 address
// it carries, as well as itself.
func (g *guard) refused(a netip.Addr) string {
	a = a.Unmap()
	if why := g.refusedOne(a); why != "" {
		return why
	}
	if v4, ok := embedded(a); ok {
		return g.refusedOne(v4)
	}
	return ""
}

// denied reports whether a (or the IPv4 address it carries) is in the
// operator's deny_addresses, which nothing exempts.
func (g *guard) denied(a netip.Addr) bool {
	a = a.Unmap()
	v4, ok := embedded(a)
	for _, p := range g.deny {
		if p.Contains(a) || ok && p.Contains(v4) {
			return true
		}
	}
	return false
}

func (g *guard) refusedOne(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || a.Is4() && thisNet.Contains(a) || a == broadcast:
		return "an unspecified or broadcast address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case g.own[a]:
		return "an address of this host"
	case nat64Local.Contains(a):
		// Where the IPv4 address sits depends on the prefix length the
		// network chose, which the proxy cannot know.
		return "a local-use NAT64 address"
	}
	for _, m := range metadata {
		if a == m {
			return "a cloud metadata endpoint"
		}
	}
	for _, p := range g.deny {
		if p.Contains(a) {
			return "in sandbox.network.deny_addresses (" + p.String() + ")"
		}
	}
	return ""
}

// embedded returns the IPv4 address an IPv6 address carries by NAT64 or
// 6to4.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}
