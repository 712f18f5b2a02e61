package temporal

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"

	"github.com/skillhost/skillhost/shared"
)

// Connection says how to reach the cluster; the host-side settings and
// the worker's flags share it.
type Connection struct {
	// Address is the cluster's frontend, host:port.
	Address string `json:"address"`
	// Namespace defaults to "default"; TaskQueue to "skillhost".
	Namespace string `json:"namespace"`
	TaskQueue string `json:"task_queue"`
	// TLS, for a cluster that wants it: the authority that signed its
	// certificate, and this side's certificate and key for mutual TLS.
	TLS struct {
		CAFile     string `json:"ca_file"`
		CertFile   string `json:"cert_file"`
		KeyFile    string `json:"key_file"`
		ServerName string `json:"server_name"`
	} `json:"tls"`
	// APIKeyFile holds an API key (Temporal Cloud); a file, since a
	// plugin's environment is scrubbed.
	APIKeyFile string `json:"api_key_file"`
	// CodecKeyFile holds a 32-byte key (64 hex digits) that the host and
	// its workers share: every payload is sealed with it (AES-256-GCM), so
	// the cluster stores only ciphertext. It is what lets a grant with
	// credentials run on the fleet.
	CodecKeyFile string `json:"codec_key_file"`
}

func (c Connection) namespace() string {
	if c.Namespace == "" {
		return "default"
	}
	return c.Namespace
}

func (c Connection) taskQueue() string {
	if c.TaskQueue == "" {
		return DefaultTaskQueue
	}
	return c.TaskQueue
}

// check names the settings that cannot work.
func (c Connection) check() []shared.ConfigProblem {
	var out []shared.ConfigProblem
	if c.Address != "" && !strings.Contains(c.Address, ":") {
		out = append(out, shared.ConfigProblem{Key: "address", Message: fmt.Sprintf("%q is not host:port", c.Address)})
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		out = append(out, shared.ConfigProblem{Key: "tls", Message: "cert_file and key_file go together"})
	}
	return out
}

// dial connects to the cluster as identity; the SDK's metrics go to
// metrics (nil: nowhere).
func (c Connection) dial(identity string, metrics client.MetricsHandler) (client.Client, error) {
	host, _ := os.Hostname()
	opts := client.Options{HostPort: c.Address, Namespace: c.namespace(),
		Identity: fmt.Sprintf("%s@%s:%d", identity, host, os.Getpid()),
		Logger:   tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)), MetricsHandler: metrics}
	if c.TLS.CAFile != "" || c.TLS.CertFile != "" || c.TLS.ServerName != "" {
		cfg := &tls.Config{ServerName: c.TLS.ServerName, MinVersion: tls.VersionTLS12}
		if c.TLS.CAFile != "" {
			pem, err := os.ReadFile(c.TLS.CAFile)
			if err != nil {
				return nil, fmt.Errorf("tls.ca_file: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("tls.ca_file %s: no certificate", c.TLS.CAFile)
			}
		}
		if c.TLS.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.TLS.CertFile, c.TLS.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("tls.cert_file: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if c.APIKeyFile != "" {
		key, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("api_key_file: %w", err)
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(strings.TrimSpace(string(key)))
	}
	if c.CodecKeyFile != "" {
		key, err := readKey(c.CodecKeyFile)
		if err != nil {
			return nil, err
		}
		s, err := newSealer(key)
		if err != nil {
			return nil, err
		}
		opts.DataConverter = converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), s)
	}
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster at %s (namespace %s): %w", c.Address, c.namespace(), err)
	}
	return cl, nil
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
