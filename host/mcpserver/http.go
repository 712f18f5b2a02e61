package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CheckListenAddr refuses to serve HTTP beyond this machine unless asked
// to and protected: addr must name a loopback host (localhost, 127.0.0.0/8,
// ::1) unless allowRemote is set, and allowRemote requires a bearer token.
// An empty host (":8080") means every interface and counts as remote.
func CheckListenAddr(addr string, allowRemote bool, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if allowRemote {
		if token == "" {
			return errors.New("--allow-remote needs a bearer token in $" + TokenEnv)
		}
		return nil
	}
	if !isLoopback(host) {
		return fmt.Errorf("--http %q is not a loopback address; pass --allow-remote (with a token in $%s) to serve other machines", addr, TokenEnv)
	}
	return nil
}

// TokenEnv is the environment variable holding the bearer token clients
// must present over HTTP. A token is read from the environment rather
// than a flag so it never shows in the process list.
const TokenEnv = "SKILLHOST_MCP_TOKEN"

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// HTTPLimits bound what unauthenticated or runaway clients can make the
// HTTP server hold.
type HTTPLimits struct {
	// MaxSessions caps the open sessions; an initialize over the cap is
	// refused (503) instead of growing the server.
	MaxSessions int
	// SessionTimeout closes a session idle this long.
	SessionTimeout time.Duration
	// MaxBody caps a request's body in bytes.
	MaxBody int64
}

// DefaultHTTPLimits are the limits when none are given.
var DefaultHTTPLimits = HTTPLimits{MaxSessions: 64, SessionTimeout: 10 * time.Minute, MaxBody: 4 << 20}

// Handler serves the MCP streamable HTTP transport. Every request must
// carry "Authorization: Bearer <token>" (token must not be empty: on
// loopback too, any local user or any script with network could otherwise
// call every tool with the operator's grants). A request from a browser
// page of another origin is refused, as is one whose Host is not the
// loopback address it reached (DNS rebinding); idle sessions expire, the
// open ones are capped, and bodies are bounded.
func (s *Server) Handler(token string, limits HTTPLimits) http.Handler {
	if limits == (HTTPLimits{}) {
		limits = DefaultHTTPLimits
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout:        limits.SessionTimeout,
		CrossOriginProtection: http.NewCrossOriginProtection(),
	})
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && s.sessions() >= limits.MaxSessions {
			http.Error(w, fmt.Sprintf("too many open sessions (%d); close one or wait for idle ones to expire", limits.MaxSessions), http.StatusServiceUnavailable)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limits.MaxBody)
		mcpHandler.ServeHTTP(w, r)
	})
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	return auth.RequireBearerToken(verify, nil)(s.withMetrics(h))
}

// sameOrigin reports whether r has no Origin header (not a browser) or one
// naming the very host the request was sent to.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// sessions counts the server's open sessions.
func (s *Server) sessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// NewToken returns a fresh random bearer token, for a server started
// without one.
func NewToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// ServeHTTP listens on addr (checked with CheckListenAddr first) and serves
// the streamable HTTP transport until ctx ends. ready, if not nil, is
// called with the bound address once the listener is open.
func (s *Server) ServeHTTP(ctx context.Context, addr string, allowRemote bool, token string, ready func(net.Addr)) error {
	if err := CheckListenAddr(addr, allowRemote, token); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	if token == "" {
		return errors.New("serving MCP over HTTP needs a bearer token")
	}
	srv := &http.Server{Handler: s.Handler(token, DefaultHTTPLimits), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if ready != nil {
		ready(ln.Addr())
	}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
