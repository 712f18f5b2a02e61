//go:build unix

package pluginclient

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared/internal/wire"
)

func TestSanitizeLogLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"@message":"ok","@level":"info"}` + "\n", `{"@message":"ok","@level":"info"}` + "\n"},
		{`{"@message":5,"@level":["x"],"@timestamp":true}` + "\n", `{"@level":"[x]","@message":"5","@timestamp":"true"}` + "\n"},
		{"plain text\n", "plain text\n"},
		{"{not json\n", "{not json\n"},
	}
	for _, tt := range tests {
		if got := string(sanitizeLogLine([]byte(tt.in))); got != tt.want {
			t.Errorf("sanitizeLogLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	f := handshakeFilter()
	if got := string(f([]byte("1|1|unix|/s|grpc|CERTCERT|true\n"))); got != "1|1|unix|/s|grpc||true\n" {
		t.Errorf("handshake line = %q", got)
	}
	if got := string(f([]byte("1|1|unix|/s|grpc|CERT\n"))); got != "1|1|unix|/s|grpc|CERT\n" {
		t.Errorf("a later line changed: %q", got)
	}
}

// A plugin that writes log lines go-plugin cannot type and offers its own
// certificate in the handshake fails to start, with or without TLS; the
// host (this test process) survives it.
func TestHostileHandshakeAndLogsDoNotCrashTheHost(t *testing.T) {
	pair, err := wire.NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawStdEncoding.EncodeToString(pair.Client.Certificates[0].Certificate[0])
	script := filepath.Join(t.TempDir(), "skillhost-sandbox-hostile")
	body := "#!/bin/sh\n" +
		`echo '{"@message": 5, "@level": {"x": 1}, "@timestamp": 7}' >&2` + "\n" +
		`echo "1|1|unix|/nonexistent/socket|grpc|` + b64 + `"` + "\n" +
		"sleep 2\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, mtls := range []bool{false, true} {
		conn, err := Launch(LaunchConfig{Path: script, AutoMTLS: mtls, StartTimeout: 20 * time.Second})
		if err == nil {
			// gRPC dials lazily: the first call finds no socket.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, err = conn.Info(ctx)
			cancel()
			conn.Close()
		}
		if err == nil {
			t.Fatalf("AutoMTLS=%v: a plugin with no socket answered", mtls)
		}
		if strings.Contains(err.Error(), "server cert") {
			t.Errorf("AutoMTLS=%v: the plugin's certificate was used: %v", mtls, err)
		}
	}
}
