package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// EgressHosts are the names the egress suite connects to and the loopback
// addresses the backend under test must resolve them to: the caller
// arranges that, in the /etc/hosts of a network namespace it made for the
// test, so nothing leaves the machine.
var EgressHosts = map[string]string{
	"allowed.skillhost.test": "127.0.0.2",
	"keyed.skillhost.test":   "127.0.0.2",
	"denied.skillhost.test":  "127.0.0.3",
	"rebound.skillhost.test": "127.0.0.4",
	// another name for the denied name's address
	"alias.skillhost.test": "127.0.0.3",
}

// EgressConfig tells the egress suite how to start the backend under test,
// as the given user, with env added to its environment (the suite's test
// certificate authority, which the backend's proxy must trust upstream).
type EgressConfig struct {
	Launch func(t *testing.T, cred *syscall.Credential, env []string) Backend
	// Control starts an unconfined backend (the null plugin), under
	// which each attack must get through: proof that it is a real one.
	Control func(t *testing.T, cred *syscall.Credential, env []string) Backend
}

// egressSecret is the credential the proxy injects for keyed.skillhost.test;
// no script may ever see it.
const egressSecret = "sk-egress-suite-7c1f0e2b9d"

// egressWorld is what the suite's scripts run against: servers on the
// loopback addresses of EgressHosts and on ::1, a UDP listener, a git
// repository served over HTTPS, and the backend.
type egressWorld struct {
	t                     *testing.T
	base, skill, work, ca string
	http, https, v6, udp  int
	backend, control      Backend
	mu                    sync.Mutex
	seen                  []string // "host path auth-ok" of each request
	udpSeen               int
	v6Seen                int
}

// Egress runs the network-by-name checks against a backend that claims
// Enforcement.Egress, as the current user and, when that is root, as
// nobody: an allowed name works through curl, Python's urllib and requests
// (if installed) and git over HTTPS; a denied name and a name resolving to
// a refused address are refused with their reasons, reported once each,
// and so is a denied name's address, asked for directly (plain and with
// CONNECT) or by another name;
// direct connections, UDP, DNS and IPv6 go nowhere; the credential reaches
// its host and is visible nowhere inside; another run's proxy cannot be
// used; and the run's other layers still hold.
func Egress(t *testing.T, cfg EgressConfig) {
	users := suiteUsers()
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			w := newEgressWorld(t)
			w.backend = cfg.Launch(t, u.cred, []string{"SSL_CERT_FILE=" + w.ca})
			w.control = cfg.Control(t, u.cred, nil)
			info, err := w.backend.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !info.Enforces.Egress {
				t.Skipf("the %s backend does not claim egress (network by name)", info.Name)
			}
			for _, c := range egressChecks {
				t.Run(c.name, func(t *testing.T) {
					if c.python && !hasPython() {
						t.Skip("needs /usr/bin/python3")
					}
					if c.requires != "" && exec.Command("/usr/bin/python3", "-c", "import "+c.requires).Run() != nil {
						t.Skipf("needs Python's %s", c.requires)
					}
					if c.escaped != nil {
						// Unconfined, with the whole network, the attack works.
						before := w.counts()
						o := w.run(t, c, w.control)
						if !c.escaped(w, o, before) {
							t.Fatalf("the attack does not work even unconfined, so it proves nothing: %v %+v\n%s", o.err, o.res, o.out)
						}
					}
					c.check(t, w, w.run(t, c, w.backend))
				})
			}
		})
	}
}

func hasPython() bool { _, err := os.Stat("/usr/bin/python3"); return err == nil }

// egressCheck is one script and what its outcome must be.
type egressCheck struct {
	name     string
	script   string // bash, or Python with python set
	python   bool
	requires string // a Python module the check needs
	check    func(t *testing.T, w *egressWorld, o outcome)
	// escaped, if set, says whether the attack got through under the
	// control; before are the world's counts from before the run.
	escaped func(w *egressWorld, o outcome, before [2]int) bool
	// grant, if set, changes the suite's grant by name for this check
	// (the control has the whole network whatever it says).
	grant func(e *shared.Egress)
}

// printed is escaped for a script that prints ESCAPED when it gets
// through.
func printed(_ *egressWorld, o outcome, _ [2]int) bool { return strings.Contains(o.out, "ESCAPED") }

// works is the check of a script that must reach the allowed host.
func works(t *testing.T, w *egressWorld, o outcome) {
	t.Helper()
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.out, "hello from allowed.skillhost.test") {
		t.Errorf("the allowed host was not reached: %v %+v\n%s", o.err, o.res, o.out)
	}
}

// refused is the check of a script that must not get through, with a
// violation for host whose reason says want.
func refused(host, want string) func(t *testing.T, w *egressWorld, o outcome) {
	return func(t *testing.T, w *egressWorld, o outcome) {
		t.Helper()
		if strings.Contains(o.out, "ESCAPED") || o.err != nil {
			t.Errorf("ESCAPE (or a failed run): %v\n%s", o.err, o.out)
		}
		if host == "" {
			return
		}
		n := 0
		for _, v := range o.res.Violations {
			if v.Kind == "network" && v.Host == host {
				n++
				if !strings.Contains(v.Reason, want) {
					t.Errorf("violation reason %q, want it to say %q", v.Reason, want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%d network violations for %s, want 1: %+v\n%s", n, host, o.res.Violations, o.out)
		}
	}
}

var egressChecks = []egressCheck{
	{name: "curl over HTTPS to an allowed name", check: works,
		script: `curl -sS --max-time 20 --cacert "$CA" "https://allowed.skillhost.test:$HTTPS/hello"`},
	{name: "curl over plain HTTP to an allowed name", check: works,
		script: `curl -sS --max-time 20 "http://allowed.skillhost.test:$HTTP/hello"`},
	{name: "Python urllib to an allowed name", python: true, check: works, script: `
import os, ssl, urllib.request
ctx = ssl.create_default_context(cafile=os.environ["CA"])
print(urllib.request.urlopen("https://allowed.skillhost.test:%s/hello" % os.environ["HTTPS"], context=ctx, timeout=20).read().decode())
`},
	{name: "Python requests to an allowed name", python: true, requires: "requests", check: works, script: `
import os, requests
print(requests.get("https://allowed.skillhost.test:%s/hello" % os.environ["HTTPS"], verify=os.environ["CA"], timeout=20).text)
`},
	{name: "SOCKS5 (ALL_PROXY) to an allowed name", python: true, check: works, script: `
import os, socket, struct, urllib.parse
u = urllib.parse.urlparse(os.environ["ALL_PROXY"])
s = socket.create_connection((u.hostname, u.port), timeout=20)
s.sendall(b"\x05\x01\x02")
assert s.recv(2) == b"\x05\x02"
user, pw = u.username.encode(), u.password.encode()
s.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(pw)]) + pw)
assert s.recv(2) == b"\x01\x00", "authentication refused"
host = b"allowed.skillhost.test"
s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host + struct.pack(">H", int(os.environ["HTTP"])))
reply = s.recv(10)
assert reply[1] == 0, "connect refused: %r" % reply
s.sendall(b"GET /hello HTTP/1.0\r\nHost: allowed.skillhost.test\r\n\r\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode())
`},
	{name: "git clone over HTTPS from an allowed name", check: func(t *testing.T, w *egressWorld, o outcome) {
		if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.out, "egress suite repository") {
			t.Errorf("git clone failed: %v %+v\n%s", o.err, o.res, o.out)
		}
	}, script: `git -c http.sslCAInfo="$CA" clone -q "https://allowed.skillhost.test:$HTTPS/git/repo.git" "$TMPDIR/repo" && cat "$TMPDIR/repo/README"`},
	{name: "a denied name gets the configured reason", check: func(t *testing.T, w *egressWorld, o outcome) {
		refused("denied.skillhost.test", "denied names are blocked in this suite")(t, w, o)
		if !strings.Contains(o.out, "denied names are blocked in this suite") {
			t.Errorf("the script did not see the reason:\n%s", o.out)
		}
	}, script: `for i in 1 2 3; do curl -sS --max-time 20 "http://denied.skillhost.test:$HTTP/hello"; echo; done
curl -sS --max-time 20 --cacert "$CA" "https://denied.skillhost.test:$HTTPS/hello" && echo ESCAPED; true`},
	{name: "an allowed name resolving to a refused address", check: refused("rebound.skillhost.test", "loopback"), escaped: printed,
		script: `curl -sS --max-time 20 "http://rebound.skillhost.test:$HTTP/hello" | grep -q "hello from" && echo ESCAPED; true`},
	{name: "deny by name, reached by address", grant: anyNameButDenied, escaped: printed,
		check: func(t *testing.T, w *egressWorld, o outcome) {
			works(t, w, o)
			refused("127.0.0.3", "127.0.0.3 is an address of denied.skillhost.test, which is denied: denied names are blocked in this suite")(t, w, o)
			refused("alias.skillhost.test", "127.0.0.3 is an address of denied.skillhost.test, which is denied")(t, w, o)
		}, script: `curl -sS --max-time 20 "http://allowed.skillhost.test:$HTTP/hello"
curl -sS --max-time 20 "http://127.0.0.3:$HTTP/hello" | grep -q "hello from" && echo ESCAPED
curl -sS --max-time 20 --proxytunnel "http://127.0.0.3:$HTTP/hello" | grep -q "hello from" && echo ESCAPED
curl -sS --max-time 20 "http://alias.skillhost.test:$HTTP/hello" | grep -q "hello from" && echo ESCAPED; true`},
	{name: "a name not on the list", check: refused("elsewhere.skillhost.test", "not in the allowed domains"),
		script: `curl -sS --max-time 20 "http://elsewhere.skillhost.test:$HTTP/hello" | grep -q "hello from" && echo ESCAPED; true`},
	{name: "a direct connection around the proxy", check: refused("", ""), escaped: printed,
		script: `curl -sS --noproxy '*' --max-time 5 "http://127.0.0.2:$HTTP/direct" && echo ESCAPED
curl -sS --noproxy '*' --max-time 5 "http://allowed.skillhost.test:$HTTP/direct" && echo ESCAPED
exec 3<>/dev/tcp/127.0.0.2/$HTTP && echo ESCAPED; true`},
	{name: "UDP and DNS to a resolver", python: true, check: func(t *testing.T, w *egressWorld, o outcome) {
		before := w.counts()[0]
		refused("", "")(t, w, o)
		time.Sleep(100 * time.Millisecond) // a datagram in flight
		if n := w.counts()[0] - before; n != 0 {
			t.Errorf("ESCAPE: %d datagrams reached the host", n)
		}
	}, escaped: func(w *egressWorld, o outcome, before [2]int) bool {
		time.Sleep(100 * time.Millisecond)
		return w.counts()[0] > before[0]
	}, script: `
import os, socket
query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07allowed\x09skillhost\x04test\x00\x00\x01\x00\x01"
for fam, addr in ((socket.AF_INET, "127.0.0.2"), (socket.AF_INET6, "::1")):
    try:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.sendto(query, (addr, int(os.environ["UDP"])))
        s.recvfrom(512)
        print("ESCAPED: an answer")
    except Exception as e:
        print("udp", addr, type(e).__name__)
try:
    socket.getaddrinfo("elsewhere.skillhost.test", 80)
    print("ESCAPED: resolved")
except Exception as e:
    print("resolve", type(e).__name__)
`},
	{name: "IPv6 to the host", escaped: printed, check: func(t *testing.T, w *egressWorld, o outcome) {
		before := w.counts()[1]
		refused("", "")(t, w, o)
		if n := w.counts()[1] - before; n != 0 {
			t.Errorf("ESCAPE: %d IPv6 connections reached the host", n)
		}
	}, script: `curl -sS --noproxy '*' --max-time 5 "http://[::1]:$V6/" && echo ESCAPED
exec 3<>/dev/tcp/::1/$V6 && echo ESCAPED; true`},
	{name: "the credential reaches its host and nothing inside", check: func(t *testing.T, w *egressWorld, o outcome) {
		if !strings.Contains(o.out, "auth ok") {
			t.Errorf("the credential was not injected:\n%s", o.out)
		}
		if strings.Contains(o.out, egressSecret) || strings.Contains(o.out, "ESCAPED") {
			t.Errorf("ESCAPE: the secret is visible inside:\n%s", o.out)
		}
	}, script: `curl -sS --max-time 20 -H "Authorization: Bearer $API_TOKEN" "https://keyed.skillhost.test:$HTTPS/auth"; echo
[ -n "$API_TOKEN" ] || echo "ESCAPED: no placeholder"
env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'
cat "$SSL_CERT_FILE" >/dev/null && grep -rIl --exclude-dir=proc --exclude-dir=sys -e "` + egressSecret + `" / 2>/dev/null | sed 's/^/found in /'
curl -sS --max-time 20 "http://keyed.skillhost.test:$HTTP/auth"; echo
curl -sS --max-time 20 -H "Authorization: Bearer $API_TOKEN" "https://allowed.skillhost.test:$HTTPS/auth" --cacert "$CA"; echo`},
	{name: "another run's proxy", check: refused("", ""), script: `
other=$(cat "$WORK/other-proxy" 2>/dev/null) || { echo "no other run"; exit 0; }
curl -sS --max-time 5 --proxy "$other" "http://allowed.skillhost.test:$HTTP/hello" | grep -q "hello from" && echo ESCAPED
port=${HTTP_PROXY##*:}; token=${other#*:*:}; token=${token%@*}
curl -sS --max-time 5 --proxy "http://skillhost:$token@127.0.0.1:$port" "http://allowed.skillhost.test:$HTTP/hello" | grep -q "hello from" && echo ESCAPED; true`},
	{name: "the other layers still hold", python: true, check: refused("", ""), escaped: printed, script: `
import socket
for what, make in (("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)),
                   ("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))):
    try:
        make(); print("ESCAPED:", what)
    except OSError as e:
        print(what, e.errno)
s = socket.socket()
try:
    s.bind(("127.0.0.1", 0)); s.listen(); print("ESCAPED: listening on", s.getsockname())
except OSError as e:
    print("bind", e.errno)
`},
}

// anyNameButDenied is the grant of issue 34's item 8: any name (allow:
// true) but the denied one. The suite's two addresses are listed on both
// sides because they are loopback, which the proxy refuses unless the
// ceiling lists them; they stand for the public addresses a denied name
// has.
func anyNameButDenied(e *shared.Egress) {
	e.Allow = []string{"*", "127.0.0.2", "127.0.0.3"}
	e.Ceiling = []string{"any host", "127.0.0.2", "127.0.0.3"}
}

func newEgressWorld(t *testing.T) *egressWorld {
	base, err := os.MkdirTemp("", "skillhost-egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &egressWorld{t: t, base: base}
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(p, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	mk("", 0o755)
	w.skill = mk("skill/scripts", 0o777)
	w.skill = filepath.Dir(w.skill)
	w.work = mk("work", 0o777)
	caDir := mk("ca", 0o755)
	caPEM, leaf := testAuthority(t, "allowed.skillhost.test", "keyed.skillhost.test", "denied.skillhost.test", "rebound.skillhost.test")
	w.ca = filepath.Join(caDir, "ca.pem")
	if err := os.WriteFile(w.ca, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	repo := w.gitRepo(mk("git", 0o755))
	handler := w.handler(repo)
	w.http = w.serve("127.0.0.2", handler, nil)
	w.https = w.serve("127.0.0.2", handler, leaf)
	w.serveAt("127.0.0.3", w.http, handler) // the denied name's server, on the same port
	w.serveAt("127.0.0.4", w.http, handler)
	w.v6 = w.acceptV6()
	w.udp = w.listenUDP()
	return w
}

func (w *egressWorld) handler(repo string) http.Handler {
	git, _ := exec.LookPath("git")
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(rw http.ResponseWriter, r *http.Request) {
		w.log(r, "")
		fmt.Fprintf(rw, "hello from %s\n", strings.Split(r.Host, ":")[0])
	})
	mux.HandleFunc("/auth", func(rw http.ResponseWriter, r *http.Request) {
		ok := r.Header.Get("Authorization") == "Bearer "+egressSecret
		w.log(r, strconv.FormatBool(ok))
		if ok {
			fmt.Fprintln(rw, "auth ok")
		} else {
			fmt.Fprintln(rw, "auth not ok")
		}
	})
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) { w.log(r, ""); http.NotFound(rw, r) })
	mux.Handle("/git/", http.StripPrefix("/git", &cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + repo, "GIT_HTTP_EXPORT_ALL=1"}}))
	return mux
}

func (w *egressWorld) log(r *http.Request, auth string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, r.Host+" "+r.URL.Path+" "+auth)
}

// serve starts handler on addr (TLS with leaf if set) and returns its port.
func (w *egressWorld) serve(addr string, h http.Handler, leaf *tls.Certificate) int {
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		w.t.Skipf("listen on %s (the suite needs the loopback network of a namespace the test made): %v", addr, err)
	}
	return w.start(ln, h, leaf)
}

func (w *egressWorld) serveAt(addr string, port int, h http.Handler) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		w.t.Skipf("listen on %s:%d: %v", addr, port, err)
	}
	w.start(ln, h, nil)
}

func (w *egressWorld) start(ln net.Listener, h http.Handler, leaf *tls.Certificate) int {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}
	if leaf != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*leaf}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go srv.Serve(ln)
	w.t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// acceptV6 counts TCP connections to ::1.
func (w *egressWorld) acceptV6() int {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		w.t.Skipf("no IPv6 loopback: %v", err)
	}
	w.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.mu.Lock()
			w.v6Seen++
			w.mu.Unlock()
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// listenUDP counts datagrams to 127.0.0.2 and ::1 on one port.
func (w *egressWorld) listenUDP() int {
	c4, err := net.ListenPacket("udp4", "127.0.0.2:0")
	if err != nil {
		w.t.Skipf("udp: %v", err)
	}
	port := c4.LocalAddr().(*net.UDPAddr).Port
	conns := []net.PacketConn{c4}
	if c6, err := net.ListenPacket("udp6", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
		conns = append(conns, c6)
	}
	for _, c := range conns {
		w.t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := c.ReadFrom(buf); err != nil {
					return
				}
				w.mu.Lock()
				w.udpSeen++
				w.mu.Unlock()
			}
		}()
	}
	return port
}

// counts are the datagrams and the IPv6 connections that reached the
// world's listeners so far.
func (w *egressWorld) counts() [2]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return [2]int{w.udpSeen, w.v6Seen}
}

// gitRepo makes a bare repository with one commit under dir.
func (w *egressWorld) gitRepo(dir string) string {
	src := filepath.Join(dir, "src")
	bare := filepath.Join(dir, "repo.git")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", src)
	os.WriteFile(filepath.Join(src, "README"), []byte("egress suite repository\n"), 0o644)
	git("-C", src, "add", "README")
	git("-C", src, "commit", "-q", "-m", "one")
	git("clone", "-q", "--bare", src, bare)
	git("-C", bare, "update-server-info")
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Chmod(p, fi.Mode()|0o755)
		}
		return nil
	})
	return dir
}

// run executes c's script under the backend with the suite's grant (the
// allowed names, the denied one with its reason, the credential, and a
// run's temporary directory), as c.grant changes it; "another run" is
// started first when the script needs one.
func (w *egressWorld) run(t *testing.T, c egressCheck, b Backend) outcome {
	script, python := c.script, c.python
	if strings.Contains(script, "other-proxy") {
		stop := w.otherRun(t)
		defer stop()
	}
	name := "check"
	if python {
		name = "check.py"
	}
	path := filepath.Join(w.skill, "scripts", name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{"/bin/bash", path}
	if python {
		argv = []string{"/usr/bin/python3", path}
	}
	req := w.request(argv, "egress-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	switch {
	case b == w.control:
		req.Grant.Egress = nil // the whole network
	case c.grant != nil:
		c.grant(req.Grant.Egress)
	}
	return w.execute(b, req)
}

func (w *egressWorld) request(argv []string, run string) shared.Request {
	return shared.Request{
		RunID: run, Argv: argv, Dir: w.work, SkillDir: w.skill, OutputLimit: 1 << 20, KillGrace: 500 * time.Millisecond,
		Env: []string{"PATH=/usr/bin:/bin", "HOME=" + w.work, "CA=" + w.ca, "WORK=" + w.work,
			"HTTP=" + strconv.Itoa(w.http), "HTTPS=" + strconv.Itoa(w.https), "V6=" + strconv.Itoa(w.v6), "UDP=" + strconv.Itoa(w.udp)},
		Grant: shared.Grant{FSRead: []string{filepath.Dir(w.ca)}, FSWrite: []string{w.work}, Network: true, Timeout: 60 * time.Second,
			Trust: shared.TrustExternal, Egress: &shared.Egress{
				Allow:    []string{"allowed.skillhost.test", "keyed.skillhost.test", "127.0.0.2", "rebound.skillhost.test"},
				Deny:     []string{"denied.skillhost.test"},
				Reasons:  map[string]string{"denied.skillhost.test": "denied names are blocked in this suite"},
				Declared: []string{"*.skillhost.test"}, Ceiling: []string{"allowed.skillhost.test", "keyed.skillhost.test", "127.0.0.2"},
				Credentials: []shared.Credential{{Host: "keyed.skillhost.test", Header: "Authorization", Prefix: "Bearer ",
					Value: egressSecret, Placeholder: "placeholder-not-a-key", PlaceholderEnv: "API_TOKEN"}},
			}},
		Limits: shared.Limits{OpenFiles: 256, Processes: 256, Memory: 1 << 30},
	}
}

func (w *egressWorld) execute(b Backend, req shared.Request) outcome { return executeOn(b, req, nil) }

// otherRun starts a run that writes its proxy URL to work/other-proxy and
// waits until told to stop; it returns once the URL is there.
func (w *egressWorld) otherRun(t *testing.T) func() {
	script := filepath.Join(w.skill, "scripts", "other")
	os.Remove(filepath.Join(w.work, "other-proxy"))
	os.Remove(filepath.Join(w.work, "other-stop"))
	os.WriteFile(script, []byte(`printf %s "$HTTP_PROXY" > "$WORK/other-proxy.tmp" && mv "$WORK/other-proxy.tmp" "$WORK/other-proxy"
for i in $(seq 600); do [ -e "$WORK/other-stop" ] && exit 0; sleep 0.1; done`), 0o755)
	done := make(chan outcome, 1)
	go func() { done <- w.execute(w.backend, w.request([]string{"/bin/bash", script}, "egress-other")) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(w.work, "other-proxy")); err == nil {
			break
		}
		select {
		case o := <-done:
			t.Fatalf("the other run ended first: %v %+v\n%s", o.err, o.res, o.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the other run never wrote its proxy URL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		os.WriteFile(filepath.Join(w.work, "other-stop"), nil, 0o666)
		<-done
	}
}

// testAuthority makes a certificate authority and one leaf certificate for
// names, signed by it; it returns the authority's PEM and the leaf.
func testAuthority(t *testing.T, names ...string) ([]byte, *tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "egress suite CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.2")},
		NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		&tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: leafKey}
}
