package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
)

// socketOf returns the Unix socket of the running plugin name.
func socketOf(t *testing.T, m *Manager, name string) string {
	t.Helper()
	inst, err := m.instance(name)
	if err != nil {
		t.Fatal(err)
	}
	inst.mu.Lock()
	dir := inst.conn.SocketDir()
	inst.mu.Unlock()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("socket directory %s: %v, %d entries", dir, err, len(entries))
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s mode = %v, %v; want 0700", dir, fi.Mode().Perm(), err)
	}
	return filepath.Join(dir, entries[0].Name())
}

// probeAs calls Probe on the plugin's socket as a stranger would: without
// the host's client certificate.
func probeAs(socket string, creds credentials.TransportCredentials) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("passthrough:///plugin",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}),
		grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	// ProbeRequest has no fields, so an Empty encodes it; the response's
	// fields are kept as unknown ones.
	return conn.Invoke(ctx, "/skillhost.executor.v1.Executor/Probe", &emptypb.Empty{}, &emptypb.Empty{})
}

// TestSocketRefusesStrangers checks what mutual TLS is for: another process
// of the same user that reaches the socket cannot drive the plugin. The
// plaintext case is the control that shows the stranger's calls would work
// otherwise.
func TestSocketRefusesStrangers(t *testing.T) {
	ctx := context.Background()
	for _, mtls := range []bool{true, false} {
		t.Run(fmt.Sprintf("AutoMTLS=%v", mtls), func(t *testing.T) {
			m := manager(t, func(o *Options) { o.AutoMTLS = mtls })
			if _, err := m.Executor(Null).Probe(ctx); err != nil {
				t.Fatal(err)
			}
			socket := socketOf(t, m, Null)
			plainErr := probeAs(socket, insecure.NewCredentials())
			tlsErr := probeAs(socket, credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}))
			if mtls {
				if plainErr == nil {
					t.Error("a plaintext client was served")
				}
				if tlsErr == nil {
					t.Error("a TLS client without the host's certificate was served")
				}
			} else if plainErr != nil {
				t.Errorf("control: plaintext client on a plaintext socket: %v", plainErr)
			}
			// The host's own connection still works.
			if _, err := m.Executor(Null).Info(ctx); err != nil {
				t.Errorf("host call after the strangers: %v", err)
			}
		})
	}
}
