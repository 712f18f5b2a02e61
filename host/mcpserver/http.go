package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// Handler serves the MCP streamable HTTP transport. With a non-empty token,
// every request must carry "Authorization: Bearer <token>". The SDK's
// protections against DNS rebinding and cross-origin requests stay on.
func (s *Server) Handler(token string) http.Handler {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	if token != "" {
		verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				return nil, auth.ErrInvalidToken
			}
			return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
		}
		h = auth.RequireBearerToken(verify, nil)(h)
	}
	return h
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
	srv := &http.Server{Handler: s.Handler(token), ReadHeaderTimeout: 10 * time.Second}
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
