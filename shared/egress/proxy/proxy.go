// Package proxy is the per-run egress proxy of the plugin SDK: HTTP
// CONNECT, plain HTTP and SOCKS5 on one port, deciding each connection by
// the run's egress.Policy, refusing the addresses no allowed name may
// resolve to, recording each refusal, and injecting credentials the
// command never sees. A backend runs one Proxy per run and routes the
// command's traffic to it.
package proxy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/elazarl/goproxy"
	socks5 "github.com/things-go/go-socks5"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress"
)

// User is the user name of a proxy's credential; the password is the
// run's token.
const User = "skillhost"

// maxViolations bounds the refusals a run reports: a script asking for
// random names must not bloat the result an agent reads.
const maxViolations = 50

// Config configures a Proxy.
type Config struct {
	// Egress is the grant's network by name.
	Egress *shared.Egress
	// RootCAs verify the upstream hosts where the proxy terminates TLS
	// (those with a credential); nil means the system's roots, to which
	// SSL_CERT_FILE adds on Linux.
	RootCAs *x509.CertPool
	// Resolver resolves names; nil means net.DefaultResolver, which
	// reads /etc/hosts first.
	Resolver Resolver
	// Listen is where the proxy listens; "" means 127.0.0.1 on a free
	// port.
	Listen string
	// DialTimeout bounds each upstream connection attempt (default 30 s).
	DialTimeout time.Duration
	// Logger, if not nil, is told at debug level of each allowed host the
	// proxy could not reach; a plugin's backend.LoggerFrom(ctx) is one, and so is
	// a *slog.Logger.
	Logger Logger
}

// Logger receives the proxy's debug messages: a message and key-value
// pairs, as hclog and log/slog take them.
type Logger interface {
	Debug(msg string, args ...any)
}

// Resolver looks names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Proxy is one run's egress proxy: HTTP CONNECT, plain HTTP and SOCKS5
// (told apart by the first byte) on one port, behind a credential only
// that run is given. Every connection it makes is decided by the run's
// Policy on the name asked for, then dialled to an address of that name
// that the guard accepts, the one resolved (no second lookup), and that
// is not an address of a name the policy denies: those names are looked
// up when the proxy starts and again for each connection, so a denied
// name cannot be reached by its address, asked for directly or through
// another name. It refuses the TRACE method, which would echo a request's
// headers, an injected credential among them, back to the command.
type Proxy struct {
	policy   *egress.Policy
	guard    *guard
	denied   *deniedAddrs
	stop     context.CancelFunc // ends the look-ups of denied names
	token    string
	resolver Resolver
	dialer   net.Dialer
	ln       net.Listener
	httpLn   *connListener
	server   *http.Server
	socks    *socks5.Server
	gp       *goproxy.ProxyHttpServer
	ca       *authority // nil without credentials
	log      Logger     // nil: no log

	mu         sync.Mutex
	seen       map[string]bool
	violations []shared.Violation
	conns      map[net.Conn]bool
	closed     bool
	wg         sync.WaitGroup
}

// Start listens and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	pol, err := egress.NewPolicy(cfg.Egress)
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	p := &Proxy{policy: pol, guard: newGuard(pol.DenyAddresses()), token: hex.EncodeToString(tok), resolver: cfg.Resolver,
		log: cfg.Logger, seen: map[string]bool{}, conns: map[net.Conn]bool{}}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	p.dialer.Timeout = cfg.DialTimeout
	if p.dialer.Timeout <= 0 {
		p.dialer.Timeout = 30 * time.Second
	}
	var ctx context.Context
	ctx, p.stop = context.WithCancel(context.Background())
	p.denied = newDeniedAddrs(ctx, pol, p.resolver, &p.wg)
	if pol.Credentials() {
		if p.ca, err = newAuthority(); err != nil {
			p.stopLookups()
			return nil, fmt.Errorf("egress proxy: %w", err)
		}
	}
	addr := cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if p.ln, err = net.Listen("tcp", addr); err != nil {
		p.stopLookups()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p.gp = p.httpProxy(cfg.RootCAs)
	p.httpLn = newConnListener(p.ln.Addr())
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute, ErrorLog: log.New(io.Discard, "", 0)}
	p.socks = socks5.NewServer(
		socks5.WithAuthMethods([]socks5.Authenticator{socks5.UserPassAuthenticator{Credentials: socks5.StaticCredentials{User: p.token}}}),
		socks5.WithResolver(byName{}),
		socks5.WithRule(&socks5.PermitCommand{EnableConnect: true}),
		socks5.WithDial(p.dial),
		socks5.WithLogger(quiet{}),
	)
	p.wg.Add(2)
	go func() { defer p.wg.Done(); _ = p.server.Serve(p.httpLn) }()
	go func() { defer p.wg.Done(); p.accept() }()
	return p, nil
}

// Port is the port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Token is the run's credential (the password of User).
func (p *Proxy) Token() string { return p.token }

// URL is the proxy's address for a command that reaches it at
// 127.0.0.1:port, with the run's credential: scheme "http" for HTTP
// clients, "socks5h" for SOCKS clients (names resolved by the proxy).
func (p *Proxy) URL(scheme string, port int) string {
	u := url.URL{Scheme: scheme, User: url.UserPassword(User, p.token), Host: "127.0.0.1:" + strconv.Itoa(port)}
	return u.String()
}

// Env is what a command's environment needs for common tools (curl, pip,
// Python urllib and requests, git over HTTPS, npm, Go) to send their
// traffic through the proxy at 127.0.0.1:port. With credentials it also
// points every trust-store variable at caFile, which the backend wrote
// from CABundle, and sets each credential's placeholder variable.
func (p *Proxy) Env(port int, caFile string) []string {
	h, s := p.URL("http", port), p.URL("socks5h", port)
	env := []string{
		"HTTP_PROXY=" + h, "HTTPS_PROXY=" + h, "http_proxy=" + h, "https_proxy=" + h,
		"ALL_PROXY=" + s, "all_proxy=" + s,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
		"npm_config_proxy=" + h, "npm_config_https_proxy=" + h,
	}
	if p.ca != nil && caFile != "" {
		for _, k := range []string{"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT"} {
			env = append(env, k+"="+caFile)
		}
	}
	env = append(env, p.policy.CredentialEnv()...)
	slices.Sort(env)
	return env
}

// CABundle is the per-run certificate authority the proxy signs the
// credential hosts' certificates with, followed by the system's roots, in
// PEM; nil when the policy injects no credential. Its key never leaves
// the proxy.
func (p *Proxy) CABundle() []byte {
	if p.ca == nil {
		return nil
	}
	return p.ca.bundle()
}

// Violations are the refused connections so far, one per host, and the
// allowed hosts the proxy could not reach, one per host and port (their
// Detail is egress.Unreachable).
func (p *Proxy) Violations() []shared.Violation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.violations)
}

// Close stops the proxy and every connection through it.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.stop()
	err := p.ln.Close()
	_ = p.server.Close()
	p.httpLn.Close()
	p.gp.Tr.CloseIdleConnections()
	p.wg.Wait()
	return err
}

// stopLookups ends the look-ups of denied names of a proxy that failed to
// start, and waits for them.
func (p *Proxy) stopLookups() {
	p.stop()
	p.wg.Wait()
}

// refuse records a refusal (once per host: a client's retries and its
// other ports add nothing the model needs) and returns it as an error.
func (p *Proxy) refuse(host string, port int, reason string) error {
	host = egress.ShowHost(host)
	p.record(strings.ToLower(host), shared.Violation{Kind: "network", Target: egress.HostPort(host, port), Host: host, Port: port, Reason: reason})
	return &RefusedError{Host: host, Port: port, Reason: reason}
}

// record keeps v under key unless a violation is kept under it already or
// the run has reported as many as it may.
func (p *Proxy) record(key string, v shared.Violation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen[key] && len(p.violations) < maxViolations {
		p.seen[key] = true
		p.violations = append(p.violations, v)
	}
}

// RefusedError is a connection the policy or the guard refused.
type RefusedError struct {
	Host   string
	Port   int
	Reason string
}

func (e *RefusedError) Error() string {
	return "skillhost refused " + egress.HostPort(e.Host, e.Port) + ": " + e.Reason
}

// UnreachableError is an allowed connection the proxy could not make.
type UnreachableError struct {
	Host   string
	Port   int
	Reason string
	Err    error
}

func (e *UnreachableError) Error() string {
	return "skillhost could not reach " + egress.HostPort(e.Host, e.Port) + ": " + e.Reason
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unreachable records an allowed connection that failed (once per host
// and port), logs it at debug level, and returns it as an error. A
// connection the command gave up on itself is no violation.
func (p *Proxy) unreachable(host string, port int, reason string, err error) error {
	host = egress.ShowHost(host)
	target := egress.HostPort(host, port)
	if errors.Is(err, context.Canceled) {
		return err
	}
	if p.log != nil {
		p.log.Debug("egress: could not reach an allowed host", "target", target, "reason", reason, "error", err)
	}
	p.record("unreachable "+strings.ToLower(target), shared.Violation{Kind: "network", Target: target, Host: host, Port: port,
		Reason: reason, Detail: egress.Unreachable})
	return &UnreachableError{Host: host, Port: port, Reason: reason, Err: err}
}

// lookupFailure says in a few words why a name did not resolve.
func lookupFailure(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return "the name was not found (no such host)"
	case errors.As(err, &dns) && dns.IsTimeout:
		return "the name's lookup timed out"
	case errors.As(err, &dns):
		return "the name could not be looked up: " + dns.Err
	}
	return "the name could not be looked up: " + err.Error()
}

// dialFailure says in a few words why a connection to an address failed.
func dialFailure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network is unreachable"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to host"
	case errors.As(err, &ne) && ne.Timeout():
		return "the connection timed out"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// tlsFailure says why TLS with an upstream failed.
func tlsFailure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return "the TLS handshake failed: the server closed the connection"
	case errors.As(err, &ne) && ne.Timeout():
		return "the TLS handshake timed out"
	}
	return "the TLS handshake failed: " + err.Error()
}

// dial connects to addr (host:port) for the command: the policy decides on
// the name, the name is resolved once, each address is checked against
// the addresses of the denied names (looked up again meanwhile) and by
// the guard, and the first accepted one that answers is used.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("skillhost: bad address %q", addr)
	}
	if !strings.HasPrefix(network, "tcp") {
		return nil, p.refuse(host, port, "only TCP leaves the sandbox")
	}
	if why := unusable(host); why != "" {
		return nil, p.refuse(host, port, why)
	}
	if ok, why := p.policy.Decide(host, port); !ok {
		return nil, p.refuse(host, port, why)
	}
	deniedLooked := p.denied.refreshing(ctx)
	var addrs []netip.Addr
	literal := false
	if a, err := netip.ParseAddr(host); err == nil {
		addrs, literal = []netip.Addr{a}, true
	} else if addrs, err = p.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, p.unreachable(host, port, lookupFailure(err), fmt.Errorf("skillhost: resolve %s: %w", host, err))
	} else if len(addrs) == 0 {
		return nil, p.unreachable(host, port, "the name has no address", fmt.Errorf("skillhost: resolve %s: no address", host))
	}
	// An IPv4 address is judged, dialled and shown as IPv4, however the
	// resolver or the command wrote it (Go's resolver gives IPv4-mapped
	// IPv6 addresses).
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	if err := p.denied.wait(ctx, deniedLooked); err != nil {
		return nil, fmt.Errorf("skillhost: look up the denied names for %s: %w", egress.HostPort(host, port), err)
	}
	var refused, failed []string
	var last error
	for _, a := range addrs {
		if i, ok := p.denied.match(a, port); ok {
			why := p.denied.names[i].AddressReason(a)
			if literal {
				return nil, p.refuse(host, port, why)
			}
			refused = append(refused, why)
			continue
		}
		if why := p.guard.refused(a); why != "" && (p.guard.denied(a) || !p.policy.Exempt(a, port)) {
			refused = append(refused, a.String()+" is "+why)
			continue
		}
		c, err := p.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return p.track(c), nil
		}
		if ctx.Err() != nil {
			return nil, err // the command gave up
		}
		why := dialFailure(err)
		if !literal {
			why = a.String() + ": " + why
		}
		failed = append(failed, why)
		last = err
	}
	if last != nil {
		why := strings.Join(failed, "; ")
		if len(refused) > 0 {
			why += "; the sandbox refuses its other addresses (" + strings.Join(refused, "; ") + ")"
		}
		return nil, p.unreachable(host, port, why, last)
	}
	return nil, p.refuse(host, port, "it resolves only to addresses the sandbox refuses ("+strings.Join(refused, "; ")+")")
}

// unusable says why a host cannot be reached at all, whatever the policy:
// an address with a zone (which no address check can judge, and which the
// kernel ignores for a global address) or a name that is not a host name.
func unusable(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "an address with a zone is never reachable"
		}
		return ""
	}
	if egress.CheckName(strings.TrimSuffix(strings.ToLower(host), ".")) != nil {
		return "it is not a host name"
	}
	return ""
}

// track registers an upstream connection so that Close ends it.
func (p *Proxy) track(c net.Conn) net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
	} else {
		p.conns[c] = true
	}
	return &tracked{Conn: c, p: p}
}

type tracked struct {
	net.Conn
	p    *Proxy
	once sync.Once
}

func (t *tracked) Close() error {
	t.once.Do(func() {
		t.p.mu.Lock()
		delete(t.p.conns, t.Conn)
		t.p.mu.Unlock()
	})
	return t.Conn.Close()
}

// CloseWrite keeps half-closes working through the wrapper.
func (t *tracked) CloseWrite() error {
	if hc, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return nil
}

// CloseRead keeps half-closes working through the wrapper.
func (t *tracked) CloseRead() error {
	if hc, ok := t.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return nil
}

// accept hands each connection to SOCKS5 (first byte 5) or HTTP.
func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			return
		}
		p.conns[c] = true
		p.mu.Unlock()
		c = &tracked{Conn: c, p: p}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			br := bufio.NewReader(c)
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			first, err := br.Peek(1)
			_ = c.SetReadDeadline(time.Time{})
			if err != nil {
				_ = c.Close()
				return
			}
			pc := &peeked{Conn: c, r: br}
			if first[0] == 5 {
				_ = p.socks.ServeConn(pc)
				_ = c.Close()
				return
			}
			p.httpLn.push(pc)
		}()
	}
}

// peeked is a connection whose first bytes were read ahead.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (c *peeked) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes a half-close on (the SOCKS5 server ends a tunnel's
// direction with it), so the client sees the end of the upstream's data.
func (c *peeked) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Conn.Close()
}

// connListener is a net.Listener fed with connections by accept.
type connListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }

// ServeHTTP is the front of the HTTP proxy: it checks the run's
// credential and the policy on the requested host before goproxy serves
// the request (the dial checks both again, with the address guard).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r.Header.Get("Proxy-Authorization")) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="skillhost"`)
		http.Error(w, "skillhost egress proxy: this run's proxy credential is required (use the proxy URL the run was given)", http.StatusProxyAuthRequired)
		return
	}
	r.Header.Del("Proxy-Authorization")
	host, port, ok := target(r)
	if !ok {
		http.Error(w, "skillhost egress proxy: not a proxy request", http.StatusBadRequest)
		return
	}
	why := unusable(host)
	if why == "" {
		_, why = p.policy.Decide(host, port)
	}
	if why != "" {
		err := p.refuse(host, port, why)
		w.Header().Set("X-Skillhost-Refused", why)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	p.gp.ServeHTTP(w, r)
}

func (p *Proxy) authorized(header string) bool {
	raw, ok := strings.CutPrefix(header, "Basic ")
	if !ok {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil {
		return false
	}
	user, pass, _ := strings.Cut(string(dec), ":")
	return user == User && subtle.ConstantTimeCompare([]byte(pass), []byte(p.token)) == 1
}

// target is the host and port a proxy request asks for.
func target(r *http.Request) (string, int, bool) {
	hostport, def := r.Host, 443
	if r.Method != http.MethodConnect {
		if !r.URL.IsAbs() || r.URL.Host == "" {
			return "", 0, false
		}
		hostport, def = r.URL.Host, 80
		if r.URL.Scheme == "https" {
			def = 443
		}
	}
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.Trim(hostport, "[]"), def, hostport != ""
	}
	port, err := strconv.Atoi(portText)
	return host, port, err == nil && port > 0 && port < 65536
}

// httpProxy is goproxy set up to dial through the policy and the guard,
// to verify upstream certificates, and to terminate TLS for the hosts
// with a credential (and only those), putting the secret in.
func (p *Proxy) httpProxy(roots *x509.CertPool) *goproxy.ProxyHttpServer {
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = log.New(io.Discard, "", 0)
	gp.Tr = &http.Transport{
		Proxy:               nil,
		DialContext:         p.dial,
		DialTLSContext:      p.dialTLS(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		MaxIdleConnsPerHost: 4,
	}
	gp.ConnectDialWithReq = func(req *http.Request, network, addr string) (net.Conn, error) {
		return p.dial(req.Context(), network, addr)
	}
	gp.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		name, _, _ := net.SplitHostPort(host)
		if _, ok := p.policy.Credential(name); ok && p.ca != nil {
			// A request in the terminated TLS that cannot be sent is
			// answered with why, as in plain HTTP, rather than with the
			// connection closed.
			ctx.RoundTripper = goproxy.RoundTripperFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
				resp, err := gp.Tr.RoundTrip(req)
				if err != nil && req.Context().Err() == nil {
					return p.failed(req, err), nil
				}
				return resp, err
			})
			return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: p.ca.tlsConfig}, host
		}
		return &goproxy.ConnectAction{Action: goproxy.ConnectAccept}, host
	})
	gp.OnRequest().DoFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		// TRACE (in any case) would have the server echo the request,
		// headers and all, the secret among them where one is put in; it
		// is refused in plain HTTP and inside the TLS the proxy
		// terminates alike.
		if strings.EqualFold(req.Method, "TRACE") {
			host, port, _ := target(req)
			why := "the TRACE method is refused: the server would echo the request's headers back, " +
				"and with them any credential the proxy puts in; use another method"
			err := p.refuse(host, port, why)
			resp := goproxy.NewResponse(req, goproxy.ContentTypeText, http.StatusForbidden, err.Error())
			resp.Header.Set("X-Skillhost-Refused", why)
			return req, resp
		}
		// The secret goes only into requests that leave over TLS to its
		// own host, whichever Host header the command wrote.
		if req.URL.Scheme == "https" {
			if c, ok := p.policy.Credential(req.URL.Hostname()); ok {
				req.Header.Set(c.Header, c.Prefix+c.Value)
			}
		}
		return req, nil
	})
	gp.OnResponse().DoFunc(func(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
		if resp == nil && ctx.Error != nil {
			return p.failed(ctx.Req, ctx.Error)
		}
		return resp
	})
	return gp
}

// failed is the response to a request the proxy could not send: 403 for a
// refusal, 502 for a host it could not reach or another upstream failure,
// each saying why.
func (p *Proxy) failed(req *http.Request, err error) *http.Response {
	var refused *RefusedError
	var unreachable *UnreachableError
	code, msg := http.StatusBadGateway, "skillhost egress proxy: the upstream connection failed: "+err.Error()
	switch {
	case errors.As(err, &refused):
		code, msg = http.StatusForbidden, refused.Error()
	case errors.As(err, &unreachable):
		msg = unreachable.Error() // recorded and logged by the dial
	case p.log != nil:
		p.log.Debug("egress: the upstream connection failed", "url", req.URL.Redacted(), "error", err)
	}
	return goproxy.NewResponse(req, goproxy.ContentTypeText, code, msg)
}

// tlsHandshakeTimeout bounds the TLS handshake with an upstream.
const tlsHandshakeTimeout = 30 * time.Second

// dialTLS connects to addr as dial does and speaks TLS to it with cfg,
// verifying the certificate for the name asked for; a failed handshake is
// a host the proxy could not reach, and is recorded as one. Only requests
// the proxy sends over TLS itself come here: those to a host with a
// credential, whose TLS the proxy terminates, and plain-HTTP requests for
// an https URL. A tunnel's TLS is the command's own.
func (p *Proxy) dialTLS(cfg *tls.Config) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := p.dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		host, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		conf := cfg.Clone()
		conf.ServerName = host
		tc := tls.Client(c, conf)
		hctx, cancel := context.WithTimeout(ctx, tlsHandshakeTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			_ = c.Close()
			if ctx.Err() != nil {
				return nil, err // the command gave up
			}
			return nil, p.unreachable(host, port, tlsFailure(err), err)
		}
		return tc, nil
	}
}

// byName leaves names unresolved, so the SOCKS5 server dials host:port and
// the proxy's dial decides on the name.
type byName struct{}

func (byName) Resolve(ctx context.Context, _ string) (context.Context, net.IP, error) {
	return ctx, nil, nil
}

type quiet struct{}

func (quiet) Errorf(string, ...any) {}
