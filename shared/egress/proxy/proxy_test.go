package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/proxy"

	"github.com/skillhost/skillhost/shared"
)

// hosts is a resolver of fixed names, as a test /etc/hosts would give.
type hosts map[string][]netip.Addr

func (h hosts) LookupNetIP(_ context.Context, _, name string) ([]netip.Addr, error) {
	if a, ok := h[strings.ToLower(name)]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// upstream is a server on a loopback address of its own, recording the
// headers it was sent; like many servers, it answers TRACE by echoing
// them.
type upstream struct {
	srv  *httptest.Server
	port int
	mu   sync.Mutex
	seen []http.Header
}

// testCA signs the upstreams' certificates for the names the tests use.
var testCA = func() *authority {
	a, err := newAuthority()
	if err != nil {
		panic(err)
	}
	return a
}()

func testRoots() *x509.CertPool {
	r := x509.NewCertPool()
	r.AddCert(testCA.cert)
	return r
}

func newUpstream(t *testing.T, addr string, tlsOn bool) *upstream {
	t.Helper()
	u := &upstream{}
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Header.Clone())
		u.mu.Unlock()
		if r.Method == "TRACE" {
			_ = r.Header.Write(w)
			return
		}
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	u.srv.Listener = ln
	if tlsOn {
		cert, err := testCA.leaf(map[string]string{"127.0.0.2": "api.test", "127.0.0.3": "other.test"}[addr])
		if err != nil {
			t.Fatal(err)
		}
		u.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
		u.srv.StartTLS()
	} else {
		u.srv.Start()
	}
	t.Cleanup(u.srv.Close)
	u.port = ln.Addr().(*net.TCPAddr).Port
	return u
}

func (u *upstream) headers() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.seen...)
}

func startProxy(t *testing.T, e *shared.Egress, roots *x509.CertPool) *Proxy {
	t.Helper()
	p, err := Start(Config{Egress: e, Resolver: hosts{
		"api.test":      {netip.MustParseAddr("127.0.0.2")},
		"other.test":    {netip.MustParseAddr("127.0.0.3")},
		"loopback.test": {netip.MustParseAddr("127.0.0.4")},
		"metadata.test": {netip.MustParseAddr("169.254.169.254")},
	}, RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// client is an HTTP client sending everything through p with the run's
// credential, trusting roots.
func client(p *Proxy, roots *x509.CertPool) *http.Client {
	u, _ := url.Parse(p.URL("http", p.Port()))
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

func get(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

func TestProxyByName(t *testing.T) {
	plain := newUpstream(t, "127.0.0.2", false)
	secure := newUpstream(t, "127.0.0.2", true)
	other := newUpstream(t, "127.0.0.3", false)
	roots := testRoots()
	// api.test resolves to a loopback address, which only its literal on
	// the list makes reachable; loopback.test's is not on it.
	p := startProxy(t, &shared.Egress{
		Allow:    []string{"api.test", "127.0.0.2", "loopback.test", "metadata.test", "other.test"},
		Deny:     []string{"other.test"},
		Reasons:  map[string]string{"other.test": "other is blocked; use api.test"},
		Declared: []string{"*.test"}, Ceiling: []string{"api.test", "127.0.0.2"},
	}, roots)
	c := client(p, roots)

	if code, body, err := get(c, fmt.Sprintf("http://api.test:%d/x", plain.port)); err != nil || code != 200 || !strings.Contains(body, "hello") {
		t.Errorf("plain HTTP to an allowed name: %d %q %v", code, body, err)
	}
	if code, body, err := get(c, fmt.Sprintf("https://api.test:%d/x", secure.port)); err != nil || code != 200 || !strings.Contains(body, "hello") {
		t.Errorf("HTTPS (CONNECT) to an allowed name: %d %q %v", code, body, err)
	}
	for range 2 { // refused twice, reported once
		code, body, err := get(c, fmt.Sprintf("http://other.test:%d/", other.port))
		if err != nil || code != http.StatusForbidden || !strings.Contains(body, "other is blocked; use api.test") {
			t.Errorf("a denied name: %d %q %v", code, body, err)
		}
	}
	if _, err := c.Get(fmt.Sprintf("https://other.test:%d/", other.port)); err == nil {
		t.Error("CONNECT to a denied name succeeded")
	}
	if code, body, _ := get(c, fmt.Sprintf("http://nothere.test:%d/", plain.port)); code != http.StatusForbidden ||
		!strings.Contains(body, "the skill declares *.test; the ceiling allows api.test") {
		t.Errorf("a name not on the list: %d %q", code, body)
	}
	if code, body, _ := get(c, fmt.Sprintf("http://loopback.test:%d/", plain.port)); code != http.StatusForbidden || !strings.Contains(body, "loopback") {
		t.Errorf("an allowed name resolving to loopback: %d %q", code, body)
	}
	if code, body, _ := get(c, "http://metadata.test/latest/meta-data/"); code != http.StatusForbidden || !strings.Contains(body, "link-local") {
		t.Errorf("an allowed name resolving to the metadata endpoint: %d %q", code, body)
	}
	if code, _, _ := get(c, fmt.Sprintf("http://127.0.0.3:%d/", other.port)); code != http.StatusForbidden {
		t.Errorf("an IP literal not on the list: %d", code)
	}
	v := p.Violations()
	byTarget := map[string]shared.Violation{}
	for _, x := range v {
		if x.Kind != "network" || x.Host == "" || x.Port == 0 || x.Reason == "" {
			t.Errorf("violation %+v", x)
		}
		if _, dup := byTarget[x.Target]; dup {
			t.Errorf("%s reported twice", x.Target)
		}
		byTarget[x.Target] = x
	}
	if r := byTarget[fmt.Sprintf("other.test:%d", other.port)].Reason; r != "other is blocked; use api.test" {
		t.Errorf("the configured reason is not the violation's: %q (%+v)", r, v)
	}
}

func TestProxyCredential(t *testing.T) {
	p := startProxy(t, &shared.Egress{Allow: []string{"api.test:8443", "127.0.0.2"}}, nil)
	u, _ := url.Parse(fmt.Sprintf("http://%s:%s@127.0.0.1:%d", User, "wrong", p.Port()))
	wrong := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	if code, _, _ := get(wrong, "http://api.test:8443/"); code != http.StatusProxyAuthRequired {
		t.Errorf("a wrong credential: %d", code)
	}
	none := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: u.Host})}}
	if code, _, _ := get(none, "http://api.test:8443/"); code != http.StatusProxyAuthRequired {
		t.Errorf("no credential: %d", code)
	}
	d, err := proxy.SOCKS5("tcp", u.Host, &proxy.Auth{User: User, Password: "wrong"}, proxy.Direct)
	if err == nil {
		if c, err := d.Dial("tcp", "api.test:8443"); err == nil {
			c.Close()
			t.Error("SOCKS5 with a wrong credential connected")
		}
	}
}

func TestProxySOCKS5(t *testing.T) {
	plain := newUpstream(t, "127.0.0.2", false)
	p := startProxy(t, &shared.Egress{Allow: []string{"api.test", "127.0.0.2"}, Ceiling: []string{"127.0.0.2"}}, nil)
	d, err := proxy.SOCKS5("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()), &proxy.Auth{User: User, Password: p.Token()}, proxy.Direct)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Dial: d.Dial}}
	if code, body, err := get(c, fmt.Sprintf("http://api.test:%d/", plain.port)); err != nil || code != 200 || !strings.Contains(body, "hello") {
		t.Errorf("SOCKS5 to an allowed name: %d %q %v", code, body, err)
	}
	if conn, err := d.Dial("tcp", fmt.Sprintf("other.test:%d", plain.port)); err == nil {
		conn.Close()
		t.Error("SOCKS5 to a name not on the list connected")
	}
	if got := p.Violations(); len(got) != 1 || got[0].Host != "other.test" {
		t.Errorf("violations %+v", got)
	}
}

func TestProxyInjectsCredential(t *testing.T) {
	const secret, placeholder = "sk-real-secret-value", "skillhost-placeholder"
	secure := newUpstream(t, "127.0.0.2", true)
	other := newUpstream(t, "127.0.0.3", true)
	upRoots := testRoots()
	p := startProxy(t, &shared.Egress{
		Allow: []string{"api.test", "127.0.0.2", "other.test", "127.0.0.3"}, Ceiling: []string{"127.0.0.2", "127.0.0.3"},
		Credentials: []shared.Credential{{Host: "api.test", Header: "Authorization", Prefix: "Bearer ", Value: secret,
			Placeholder: placeholder, PlaceholderEnv: "API_KEY"}},
	}, upRoots)
	// The command trusts only the bundle it is given: the run's authority
	// for api.test, the system's roots for the rest (the test authority
	// is added here as a system root would be).
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CABundle()) {
		t.Fatal("the bundle has no certificate")
	}
	roots.AddCert(testCA.cert)
	c := client(p, roots)
	for _, u := range []string{fmt.Sprintf("https://api.test:%d/v1", secure.port), fmt.Sprintf("https://other.test:%d/v1", other.port)} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+placeholder)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		resp.Body.Close()
	}
	if h := secure.headers(); len(h) != 1 || h[0].Get("Authorization") != "Bearer "+secret {
		t.Errorf("api.test got %v, want the secret", h)
	}
	if h := other.headers(); len(h) != 1 || h[0].Get("Authorization") != "Bearer "+placeholder {
		t.Errorf("other.test got %v, want the placeholder", h)
	}
	env := strings.Join(p.Env(p.Port(), "/tmp/bundle.pem"), "\n")
	if strings.Contains(env, secret) || !strings.Contains(env, "API_KEY="+placeholder) || !strings.Contains(env, "SSL_CERT_FILE=/tmp/bundle.pem") {
		t.Errorf("the command's environment:\n%s", env)
	}
	if strings.Contains(string(p.CABundle()), "PRIVATE KEY") {
		t.Error("the bundle holds a private key")
	}
	// A server the run's authority did not sign for, impersonated by an
	// upstream whose certificate the proxy does not trust, is refused.
	untrusted := startProxy(t, &shared.Egress{Allow: []string{"api.test", "127.0.0.2"}, Ceiling: []string{"127.0.0.2"},
		Credentials: []shared.Credential{{Host: "api.test", Header: "x-api-key", Value: secret}}}, x509.NewCertPool())
	r2 := x509.NewCertPool()
	r2.AppendCertsFromPEM(untrusted.CABundle())
	if code, body, err := get(client(untrusted, r2), fmt.Sprintf("https://api.test:%d/", secure.port)); err == nil && code == 200 || strings.Contains(body, secret) {
		t.Errorf("an upstream with an untrusted certificate: %d %q %v", code, body, err)
	}
	if h := secure.headers(); len(h) != 1 {
		t.Errorf("the untrusted upstream was sent %d requests", len(h)-1)
	}
}

// Only the operator's ceiling can make an always-refused address
// reachable, deny_addresses never, and an address with a zone never.
func TestProxyExemptions(t *testing.T) {
	plain := newUpstream(t, "127.0.0.2", false)
	for _, c := range []struct {
		name string
		e    *shared.Egress
		url  string
		want int
	}{
		{"a literal the skill declared under a ceiling of any host", &shared.Egress{Allow: []string{"127.0.0.2"}, Ceiling: []string{"any host"}},
			fmt.Sprintf("http://127.0.0.2:%d/", plain.port), http.StatusForbidden},
		{"a literal on the ceiling's list", &shared.Egress{Allow: []string{"127.0.0.2"}, Ceiling: []string{"127.0.0.2"}},
			fmt.Sprintf("http://127.0.0.2:%d/", plain.port), http.StatusOK},
		{"deny_addresses wins over the ceiling's literal", &shared.Egress{Allow: []string{"127.0.0.2"}, Ceiling: []string{"127.0.0.2"}, DenyAddresses: []string{"127.0.0.0/8"}},
			fmt.Sprintf("http://127.0.0.2:%d/", plain.port), http.StatusForbidden},
		{"an IPv6 address with a zone", &shared.Egress{Allow: []string{"*"}, Ceiling: []string{"any host"}},
			"http://[fd00:ec2::254%251]/latest/meta-data/", http.StatusForbidden},
		{"a name that is not a host name", &shared.Egress{Allow: []string{"*"}, Ceiling: []string{"any host"}},
			"http://bad_name!.test/", http.StatusForbidden},
	} {
		p := startProxy(t, c.e, nil)
		code, body, err := get(client(p, nil), c.url)
		if code != c.want {
			t.Errorf("%s: %d %q %v, want %d", c.name, code, body, err, c.want)
		}
	}
}
