package proxy

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/skillhost/skillhost/shared/egress"
)

// denyLookupTimeout bounds each look-up of the denied names: a slow
// answer for one of them must not hold a run's connections for long.
const denyLookupTimeout = 5 * time.Second

// deniedAddrs are the addresses of the exact names the policy denies
// (sandbox.network.deny: blocked.example.com): every address each name
// has resolved to during the run, looked up when the proxy starts and
// again before each connection, since a name can change address (and an
// address it had stays denied for the rest of the run). A connection to
// one of them is refused however it was asked for: by the address itself,
// or by another name that resolves to it. A wildcard names no address to
// look up, and a denied IP literal is refused by the policy as it stands.
type deniedAddrs struct {
	names    []egress.DeniedName
	resolver Resolver
	// started is closed once the look-ups made when the proxy started
	// are done; each connection waits for it.
	started chan struct{}

	mu    sync.Mutex
	addrs map[netip.Addr][]int // address → the denied names it belongs to (indexes of names)
}

// newDeniedAddrs looks the policy's denied names up with r, in the
// background until ctx ends; each connection waits for that first
// look-up (see wait).
func newDeniedAddrs(ctx context.Context, pol *egress.Policy, r Resolver, wg *sync.WaitGroup) *deniedAddrs {
	d := &deniedAddrs{names: pol.DeniedNames(), resolver: r, started: make(chan struct{}), addrs: map[netip.Addr][]int{}}
	if len(d.names) == 0 {
		close(d.started)
		return d
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(d.started)
		d.refresh(ctx)
	}()
	return d
}

// refreshing looks the denied names up again, in the background; the
// channel it returns is closed when that is done. Without denied names it
// is closed already.
func (d *deniedAddrs) refreshing(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if len(d.names) == 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		d.refresh(ctx)
	}()
	return done
}

// wait returns once the look-ups made at start and the one done reports
// on are over, or with ctx's error.
func (d *deniedAddrs) wait(ctx context.Context, done <-chan struct{}) error {
	for _, ch := range []<-chan struct{}{d.started, done} {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// refresh looks every denied name up at once and adds the addresses
// found. A name that does not resolve (or not in time) adds nothing now;
// the addresses it had keep being refused.
func (d *deniedAddrs) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, denyLookupTimeout)
	defer cancel()
	found := make([][]netip.Addr, len(d.names))
	var wg sync.WaitGroup
	for k, n := range d.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[k], _ = d.resolver.LookupNetIP(ctx, "ip", n.Pattern.Host)
		}()
	}
	wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.names {
		for _, a := range found[k] {
			keys := []netip.Addr{a.Unmap().WithZone("")}
			if v4, ok := embedded(keys[0]); ok {
				keys = append(keys, v4)
			}
			for _, key := range keys {
				if !slices.Contains(d.addrs[key], k) {
					d.addrs[key] = append(d.addrs[key], k)
				}
			}
		}
	}
}

// match returns the index of a denied name (in names) whose address a is, on port (a denied name with a port denies
// its addresses on that port alone). An IPv4-mapped, NAT64 or 6to4
// address is judged as itself and as the IPv4 address it carries.
func (d *deniedAddrs) match(a netip.Addr, port int) (int, bool) {
	keys := []netip.Addr{a.Unmap().WithZone("")}
	if v4, ok := embedded(keys[0]); ok {
		keys = append(keys, v4)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, key := range keys {
		for _, i := range d.addrs[key] {
			if pt := d.names[i].Pattern.Port; pt == 0 || pt == port {
				return i, true
			}
		}
	}
	return 0, false
}
