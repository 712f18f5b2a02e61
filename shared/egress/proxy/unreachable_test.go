package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// A plugin's logger (backend.Logger) and log/slog's are Loggers.
var (
	_ Logger = hclog.NewNullLogger()
	_ Logger = slog.Default()
)

// debugLog is a Logger that keeps what it is told.
type debugLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *debugLog) Debug(msg string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(append([]any{msg}, args...)...))
}

func (l *debugLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// closedPort is a port on addr where nothing listens (it did a moment
// ago).
func closedPort(t *testing.T, addr string) int {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// unreachableFor is the violation p recorded for target as a host it
// could not reach.
func unreachableFor(p *Proxy, target string) (shared.Violation, bool) {
	for _, v := range p.Violations() {
		if v.Target == target && v.Detail == egress.Unreachable {
			return v, true
		}
	}
	return shared.Violation{}, false
}

// An allowed host the proxy cannot reach (its name not found, nothing
// listening on its port) is a violation that says why, the client is told
// the same, and the proxy's logger hears of it; over plain HTTP, CONNECT
// and SOCKS5.
func TestProxyUnreachable(t *testing.T) {
	port := closedPort(t, "127.0.0.2")
	at := func(h string) string { return net.JoinHostPort(h, strconv.Itoa(port)) }
	for _, c := range []struct {
		name, kind, target string
		host, reason       string
	}{
		{"refused, by name, plain", "plain", at("api.test"), "api.test", "127.0.0.2: connection refused"},
		{"refused, by name, CONNECT", "connect", at("api.test"), "api.test", "127.0.0.2: connection refused"},
		{"refused, by name, SOCKS5", "socks", at("api.test"), "api.test", "127.0.0.2: connection refused"},
		{"refused, an address", "plain", at("127.0.0.2"), "127.0.0.2", "connection refused"},
		{"refused, an IPv4-mapped address", "connect", at("::ffff:127.0.0.2"), "127.0.0.2", "connection refused"},
		{"not found, plain", "plain", at("nothere.test"), "nothere.test", "the name was not found (no such host)"},
		{"not found, CONNECT", "connect", at("nothere.test"), "nothere.test", "the name was not found (no such host)"},
		{"not found, SOCKS5", "socks", at("nothere.test"), "nothere.test", "the name was not found (no such host)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log debugLog
			all := []string{"*", "127.0.0.2"}
			p, err := Start(Config{Egress: &shared.Egress{Allow: all, Ceiling: all}, Resolver: newLiveHosts(testNames), Logger: &log})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			target := egress.HostPort(c.host, port)
			line := "skillhost could not reach " + target + ": " + c.reason
			for range 2 { // failed twice, reported once
				got := reach(t, p, c.kind, c.target)
				if c.kind != "socks" && !strings.Contains(got, line) {
					t.Errorf("the client got %q, want it to say %q", got, line)
				}
			}
			v, ok := unreachableFor(p, target)
			if !ok || v.Kind != "network" || v.Host != c.host || v.Port != port || v.Reason != c.reason {
				t.Errorf("violations %+v, want %s: %s", p.Violations(), target, c.reason)
			}
			if n := len(p.Violations()); n != 1 {
				t.Errorf("%d violations, want 1: %+v", n, p.Violations())
			}
			if !strings.Contains(log.String(), "could not reach") || !strings.Contains(log.String(), c.reason) {
				t.Errorf("the log: %q", log.String())
			}
		})
	}
}

// A host with a credential, whose TLS the proxy terminates, is not
// reached when TLS with it fails: a certificate the proxy does not trust,
// a server that fails the handshake, one that closes the connection.
func TestProxyUpstreamTLSFails(t *testing.T) {
	secure := newUpstream(t, "127.0.0.2", true)
	// A TLS server that speaks only TLS 1.0, which the proxy refuses.
	oldLn, err := tls.Listen("tcp", "127.0.0.2:0", &tls.Config{Certificates: secure.srv.TLS.Certificates,
		MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10})
	if err != nil {
		t.Fatal(err)
	}
	defer oldLn.Close()
	oldSrv := &http.Server{Handler: http.NotFoundHandler(), ErrorLog: log.New(io.Discard, "", 0)}
	go oldSrv.Serve(oldLn)
	// A server that takes the connection and closes it.
	closer, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	go func() {
		for {
			c, err := closer.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, c := range []struct {
		name   string
		port   int
		roots  *x509.CertPool
		reason string
	}{
		{"an untrusted certificate", secure.port, x509.NewCertPool(), "the TLS handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{"an old protocol version", oldLn.Addr().(*net.TCPAddr).Port, testRoots(), "the TLS handshake failed: "},
		{"the connection closed", closer.Addr().(*net.TCPAddr).Port, testRoots(), "the TLS handshake failed: the server closed the connection"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log debugLog
			p, err := Start(Config{Egress: &shared.Egress{Allow: []string{"api.test", "127.0.0.2"}, Ceiling: []string{"127.0.0.2"},
				Credentials: []shared.Credential{{Host: "api.test", Header: "x-api-key", Value: "sk-secret"}}},
				Resolver: newLiveHosts(testNames), RootCAs: c.roots, Logger: &log})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			roots := x509.NewCertPool()
			roots.AppendCertsFromPEM(p.CABundle())
			target := "api.test:" + strconv.Itoa(c.port)
			code, body, err := get(client(p, roots), "https://"+target+"/")
			if err != nil || code != http.StatusBadGateway || !strings.Contains(body, "skillhost could not reach "+target+": "+c.reason) {
				t.Errorf("the client got %d %q %v, want 502 with %q", code, body, err, c.reason)
			}
			v, ok := unreachableFor(p, target)
			if !ok || v.Kind != "network" || v.Host != "api.test" || v.Port != c.port || !strings.HasPrefix(v.Reason, c.reason) {
				t.Errorf("violations %+v, want %s: %s", p.Violations(), target, c.reason)
			}
			if !strings.Contains(log.String(), "could not reach") {
				t.Errorf("the log: %q", log.String())
			}
		})
	}
}

// Reasons and violations show an IPv4 address as IPv4, however it was
// resolved (Go's resolver gives IPv4-mapped IPv6 addresses) or asked for.
func TestProxyShowsIPv4(t *testing.T) {
	port := twinServers(t)
	mapped := func(s string) []netip.Addr { return []netip.Addr{netip.AddrFrom16(netip.MustParseAddr(s).As16())} }
	r := hosts{"loopback.test": mapped("127.0.0.4"), "alias.test": mapped("127.0.0.3"), "blocked.test": mapped("127.0.0.3")}
	all := []string{"*", "127.0.0.2", "127.0.0.3"}
	p := startWith(t, &shared.Egress{Allow: all, Ceiling: all, Deny: []string{"blocked.test"}}, r, nil)
	at := func(h string) string { return net.JoinHostPort(h, strconv.Itoa(port)) }
	for _, c := range []struct{ kind, target, host, want string }{
		{"plain", at("loopback.test"), "loopback.test", "it resolves only to addresses the sandbox refuses (127.0.0.4 is a loopback address)"},
		{"connect", at("alias.test"), "alias.test", "it resolves only to addresses the sandbox refuses (127.0.0.3 is an address of blocked.test, which is denied"},
		{"plain", at("::ffff:127.0.0.3"), "127.0.0.3", "127.0.0.3 is an address of blocked.test, which is denied"},
		{"socks", at("::ffff:127.0.0.9"), "127.0.0.9", "127.0.0.9:" + strconv.Itoa(port) + " is an IP address, and the grant allows it only by name"},
	} {
		got := reach(t, p, c.kind, c.target)
		var v shared.Violation
		for _, x := range p.Violations() {
			if x.Host == c.host {
				v = x
			}
		}
		if !strings.HasPrefix(v.Reason, c.want) || v.Target != egress.HostPort(c.host, port) || strings.Contains(got, "::ffff:") {
			t.Errorf("%s to %s: violation %+v (the client saw %q), want %q", c.kind, c.target, v, got, c.want)
		}
	}
	for _, v := range p.Violations() {
		if strings.Contains(fmt.Sprint(v), "::ffff:") {
			t.Errorf("a violation shows an IPv4-mapped address: %+v", v)
		}
	}
}
