package proxy

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// liveHosts is a resolver whose answers a test can change while the proxy
// runs, as a name's DNS records change.
type liveHosts struct {
	mu sync.Mutex
	m  map[string][]netip.Addr
}

func newLiveHosts(m map[string]string) *liveHosts {
	h := &liveHosts{m: map[string][]netip.Addr{}}
	for name, addrs := range m {
		h.set(name, addrs)
	}
	return h
}

// set makes name resolve to addrs, a comma-separated list.
func (h *liveHosts) set(name, addrs string) {
	var l []netip.Addr
	for _, a := range strings.Split(addrs, ",") {
		l = append(l, netip.MustParseAddr(a))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[name] = l
}

func (h *liveHosts) LookupNetIP(_ context.Context, _, name string) ([]netip.Addr, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.m[strings.ToLower(name)]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// testNames are the names the tests of denied addresses resolve: all
// loopback. blocked.test is the name the tests deny; alias.test is
// another name for its address, and both.test has its address and
// api.test's.
var testNames = map[string]string{
	"api.test":     "127.0.0.2",
	"blocked.test": "127.0.0.3",
	"alias.test":   "127.0.0.3",
	"both.test":    "127.0.0.3,127.0.0.2",
}

// twinServers starts an HTTP server on 127.0.0.2 and one on 127.0.0.3, on
// the same port, each answering "hello from" its own address; it returns
// the port.
func twinServers(t *testing.T) int {
	t.Helper()
	port := 0
	for _, addr := range []string{"127.0.0.2", "127.0.0.3"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err != nil {
			t.Skipf("listen on %s: %v", addr, err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello from %s", addr)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	return port
}

// startWith starts a proxy for e resolving names with r.
func startWith(t *testing.T, e *shared.Egress, r Resolver, roots *x509.CertPool) *Proxy {
	t.Helper()
	p, err := Start(Config{Egress: e, Resolver: r, RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// reach asks p for http://hostport/ by way of kind ("plain" HTTP through
// the proxy, "connect" for a tunnel asked for with CONNECT, "socks" for
// SOCKS5) and returns what came back, or why nothing did.
func reach(t *testing.T, p *Proxy, kind, hostport string) string {
	t.Helper()
	proxyAddr := "127.0.0.1:" + strconv.Itoa(p.Port())
	switch kind {
	case "plain":
		_, body, err := get(client(p, nil), "http://"+hostport+"/")
		if err != nil {
			return err.Error()
		}
		return body
	case "connect":
		c, err := net.Dial("tcp", proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		auth := base64.StdEncoding.EncodeToString([]byte(User + ":" + p.Token()))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", hostport, hostport, auth)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			return "CONNECT: " + err.Error()
		}
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			return fmt.Sprintf("CONNECT: %d %s", resp.StatusCode, body)
		}
		return getOver(c, br, hostport)
	case "socks":
		d, err := proxy.SOCKS5("tcp", proxyAddr, &proxy.Auth{User: User, Password: p.Token()}, proxy.Direct)
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial("tcp", hostport)
		if err != nil {
			return "SOCKS5: " + err.Error()
		}
		defer c.Close()
		return getOver(c, bufio.NewReader(c), hostport)
	}
	t.Fatalf("no way %q", kind)
	return ""
}

// getOver sends a GET for / over an open connection and returns the body.
func getOver(c net.Conn, br *bufio.Reader, host string) string {
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "GET: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// reasonFor is the reason of the violation p recorded for host (an
// IPv4-mapped address as the IPv4 address violations show), or "".
func reasonFor(p *Proxy, host string) string {
	for _, v := range p.Violations() {
		if v.Kind == "network" && v.Host == egress.ShowHost(host) && v.Port != 0 {
			return v.Reason
		}
	}
	return ""
}

// checkReach asks for target by way of kind and checks the outcome: the
// server at want's address answered (want "hello from ..."), or nothing
// got through and the violation for target's host says want.
func checkReach(t *testing.T, p *Proxy, kind, target, want string) {
	t.Helper()
	got := reach(t, p, kind, target)
	host, _, _ := net.SplitHostPort(target)
	if strings.HasPrefix(want, "hello from") {
		if !strings.Contains(got, want) {
			t.Errorf("%s to %s: got %q, want %q (violations %+v)", kind, target, got, want, p.Violations())
		}
		return
	}
	if strings.Contains(got, "hello from") {
		t.Errorf("ESCAPE: %s to %s got through: %q", kind, target, got)
	}
	if r := reasonFor(p, host); !strings.Contains(r, want) {
		t.Errorf("%s to %s: violation reason %q, want it to say %q (the client saw %q)", kind, target, r, want, got)
	}
}

// The addresses of a denied name are refused with it, asked for directly
// (plain HTTP, CONNECT, SOCKS5, IPv4-mapped) or through another name;
// without the denial, with a wildcard or on another port they are not.
func TestProxyDeniedNameAddresses(t *testing.T) {
	port := twinServers(t)
	at := func(h string) string { return net.JoinHostPort(h, strconv.Itoa(port)) }
	// Any name, as allow: true gives, and the two addresses: they stand
	// for public ones, which loopback addresses are not (the guard lets
	// them through only when the ceiling lists them).
	grant := func(deny ...string) *shared.Egress {
		all := []string{"*", "127.0.0.2", "127.0.0.3"}
		return &shared.Egress{Allow: all, Ceiling: all, Deny: deny}
	}
	const denied = "127.0.0.3 is an address of blocked.test, which is denied by the operator (sandbox.network.deny: blocked.test"
	for _, c := range []struct {
		name   string
		e      *shared.Egress
		kind   string
		target string
		want   string
	}{
		{"control: another address, plain", grant("blocked.test"), "plain", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: another address, CONNECT", grant("blocked.test"), "connect", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: another address, SOCKS5", grant("blocked.test"), "socks", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: another name", grant("blocked.test"), "plain", at("api.test"), "hello from 127.0.0.2"},
		{"control: the address with no name denied", grant(), "plain", at("127.0.0.3"), "hello from 127.0.0.3"},
		{"control: the address under a denied wildcard", grant("*.blocked.test"), "plain", at("127.0.0.3"), "hello from 127.0.0.3"},
		{"control: the address, its name denied on another port", grant("blocked.test:1"), "connect", at("127.0.0.3"), "hello from 127.0.0.3"},
		{"the name itself", grant("blocked.test"), "plain", at("blocked.test"), "is denied by the operator (sandbox.network.deny: blocked.test)"},
		{"its address, plain", grant("blocked.test"), "plain", at("127.0.0.3"), denied},
		{"its address, CONNECT", grant("blocked.test"), "connect", at("127.0.0.3"), denied},
		{"its address, SOCKS5", grant("blocked.test"), "socks", at("127.0.0.3"), denied},
		{"its address IPv4-mapped", grant("blocked.test"), "plain", at("::ffff:127.0.0.3"), denied},
		{"its address, its name denied on that port", grant("blocked.test:" + strconv.Itoa(port)), "plain", at("127.0.0.3"), "127.0.0.3 is an address of blocked.test"},
		{"its address, with the operator's reason", &shared.Egress{Allow: []string{"*", "127.0.0.3"}, Ceiling: []string{"127.0.0.3"},
			Deny: []string{"blocked.test"}, Reasons: map[string]string{"blocked.test": "blocked is off limits"}},
			"plain", at("127.0.0.3"), "127.0.0.3 is an address of blocked.test, which is denied: blocked is off limits"},
		{"another name for its address", grant("blocked.test"), "plain", at("alias.test"),
			"it resolves only to addresses the sandbox refuses (" + denied},
		{"another name for its address, CONNECT", grant("blocked.test"), "connect", at("alias.test"), denied},
		{"a name with its address and another", grant("blocked.test"), "plain", at("both.test"), "hello from 127.0.0.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startWith(t, c.e, newLiveHosts(testNames), nil)
			checkReach(t, p, c.kind, c.target, c.want)
		})
	}
}

// A denied name is looked up when the proxy starts and again for each
// connection: an address it had and one it moved to are both refused.
func TestProxyDeniedNameLookedUpAgain(t *testing.T) {
	port := twinServers(t)
	all := []string{"*", "127.0.0.2", "127.0.0.3"}
	for _, c := range []struct {
		name          string
		atStart, then string // blocked.test's address at start, then when asked
		want          string
	}{
		{"control: never its address", "127.0.0.5", "127.0.0.6", "hello from 127.0.0.3"},
		{"its address at start", "127.0.0.3", "127.0.0.5", "127.0.0.3 is an address of blocked.test"},
		{"its address when asked", "127.0.0.5", "127.0.0.3", "127.0.0.3 is an address of blocked.test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newLiveHosts(map[string]string{"blocked.test": c.atStart})
			p := startWith(t, &shared.Egress{Allow: all, Ceiling: all, Deny: []string{"blocked.test"}}, r, nil)
			<-p.denied.started
			r.set("blocked.test", c.then)
			checkReach(t, p, "plain", net.JoinHostPort("127.0.0.3", strconv.Itoa(port)), c.want)
		})
	}
}

// Under a grant of any name, an IP address is reachable only when an
// allow pattern is that address.
func TestProxyAddressNeedsListing(t *testing.T) {
	port := twinServers(t)
	at := func(h string) string { return net.JoinHostPort(h, strconv.Itoa(port)) }
	const byName = "is an IP address, and the grant allows it only by name: ask for the host by its name, or list the address in network.allow"
	anyName := &shared.Egress{Allow: []string{"*"}, Ceiling: []string{"any host"}}
	listed := &shared.Egress{Allow: []string{"*", "127.0.0.2"}, Ceiling: []string{"*", "127.0.0.2"}}
	otherPort := &shared.Egress{Allow: []string{"*", "127.0.0.2:1"}, Ceiling: []string{"*", "127.0.0.2"}}
	for _, c := range []struct {
		name   string
		e      *shared.Egress
		kind   string
		target string
		want   string
	}{
		{"control: the address listed, plain", listed, "plain", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: the address listed, CONNECT", listed, "connect", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: the address listed, SOCKS5", listed, "socks", at("127.0.0.2"), "hello from 127.0.0.2"},
		{"control: a name", listed, "plain", at("api.test"), "hello from 127.0.0.2"},
		{"any name, an address, plain", anyName, "plain", at("127.0.0.2"), byName},
		{"any name, an address, CONNECT", anyName, "connect", at("127.0.0.2"), byName},
		{"any name, an address, SOCKS5", anyName, "socks", at("127.0.0.2"), byName},
		{"any name, an IPv6 address", anyName, "plain", at("::1"), byName},
		{"the address listed on another port", otherPort, "plain", at("127.0.0.2"), byName},
		{"a list of names, an address", &shared.Egress{Allow: []string{"api.test"}, Ceiling: []string{"api.test"}},
			"plain", at("127.0.0.2"), "is not in the allowed domains"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startWith(t, c.e, newLiveHosts(testNames), nil)
			checkReach(t, p, c.kind, c.target, c.want)
		})
	}
}

// TRACE is refused in plain HTTP and where the proxy terminates TLS to
// put a credential in; other methods go through.
func TestProxyRefusesTrace(t *testing.T) {
	const secret = "sk-trace-secret"
	plain := newUpstream(t, "127.0.0.2", false)
	secure := newUpstream(t, "127.0.0.2", true)
	for _, c := range []struct {
		method, url string
		want        int
	}{
		{"GET", fmt.Sprintf("http://api.test:%d/", plain.port), http.StatusOK},
		{"TRACE", fmt.Sprintf("http://api.test:%d/", plain.port), http.StatusForbidden},
		{"trace", fmt.Sprintf("http://api.test:%d/", plain.port), http.StatusForbidden},
		{"GET", fmt.Sprintf("https://api.test:%d/", secure.port), http.StatusOK},
		{"TRACE", fmt.Sprintf("https://api.test:%d/", secure.port), http.StatusForbidden},
	} {
		t.Run(c.method+" "+c.url, func(t *testing.T) {
			p := startProxy(t, &shared.Egress{Allow: []string{"api.test", "127.0.0.2"}, Ceiling: []string{"127.0.0.2"},
				Credentials: []shared.Credential{{Host: "api.test", Header: "x-api-key", Value: secret}}}, testRoots())
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(p.CABundle())
			before := len(plain.headers()) + len(secure.headers())
			req, err := http.NewRequest(c.method, c.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client(p, roots).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), secret) {
				t.Fatalf("ESCAPE: the secret came back: %q", body)
			}
			if resp.StatusCode != c.want {
				t.Fatalf("%d %q, want %d", resp.StatusCode, body, c.want)
			}
			sent := len(plain.headers()) + len(secure.headers()) - before
			if c.want == http.StatusOK {
				if sent != 1 {
					t.Errorf("the upstream got %d requests, want 1", sent)
				}
				return
			}
			if sent != 0 {
				t.Errorf("ESCAPE: the upstream got the %s request", c.method)
			}
			if r := reasonFor(p, "api.test"); !strings.Contains(r, "the TRACE method is refused") ||
				resp.Header.Get("X-Skillhost-Refused") != r || !strings.Contains(string(body), r) {
				t.Errorf("reason %q, header %q, body %q", r, resp.Header.Get("X-Skillhost-Refused"), body)
			}
		})
	}
	// The requests that went through to the credential's host carried it.
	for _, h := range secure.headers() {
		if h.Get("x-api-key") != secret {
			t.Errorf("the credential host got %v", h)
		}
	}
}
