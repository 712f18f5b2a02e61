package wire

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// maxTLSBundle bounds what a plugin reads from the TLS descriptor.
const maxTLSBundle = 64 << 10

// Why skillhost does its own mutual TLS instead of go-plugin's AutoMTLS:
// AutoMTLS makes two ECDSA P-521 keys and certificates per plugin start, one
// in each process, which costs more CPU than everything else a one-shot
// `skillhost run` does together. Mutual TLS is still worth having: the
// socket's directory is 0700, but a confined script runs as the same user,
// and a grant that covers the socket directory with the network on (or
// any unconfined process of that user) could otherwise connect and ask the
// plugin for an unconfined run. So the host makes both identities with
// Ed25519 (microseconds each), sends the plugin its key over a pipe that
// only the plugin inherits (never the environment, which /proc shows), and
// each side trusts exactly the other's certificate.

// TLSPair is the host's and the plugin's side of one plugin connection.
type TLSPair struct {
	Client *tls.Config // the host's
	Bundle []byte      // what the plugin reads: its cert and key, the host's cert
}

// NewTLSPair makes fresh identities for one plugin process.
func NewTLSPair() (*TLSPair, error) {
	clientCert, clientPEM, _, err := selfSigned()
	if err != nil {
		return nil, err
	}
	serverCert, serverPEM, serverKeyPEM, err := selfSigned()
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(serverCert.Leaf)
	var bundle bytes.Buffer
	bundle.Write(serverPEM)
	bundle.Write(serverKeyPEM)
	bundle.Write(clientPEM)
	return &TLSPair{
		Client: &tls.Config{
			Certificates: []tls.Certificate{clientCert},
			RootCAs:      roots,
			ServerName:   "localhost",
			MinVersion:   tls.VersionTLS13,
		},
		Bundle: bundle.Bytes(),
	}, nil
}

// selfSigned makes an Ed25519 key and a self-signed certificate for
// "localhost" usable by either end.
func selfSigned() (tls.Certificate, []byte, []byte, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("TLS key: %w", err)
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("TLS serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"skillhost"}},
		DNSNames:              []string{"localhost"},
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SerialNumber:          sn,
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(30 * 24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("TLS certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("TLS certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, nil, fmt.Errorf("TLS key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, certPEM, keyPEM, nil
}

// ServerTLS reads the bundle a host sent on the descriptor named by
// shared.EnvTLSFD and returns the plugin's TLS configuration, or nil when the host
// sent none (it asked for a plaintext socket).
func ServerTLS() (*tls.Config, error) {
	v := os.Getenv(shared.EnvTLSFD)
	if v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not an inherited descriptor", shared.EnvTLSFD, v)
	}
	f := os.NewFile(uintptr(fd), "tls")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTLSBundle+1))
	if err != nil {
		return nil, fmt.Errorf("read TLS identity: %w", err)
	}
	if len(data) > maxTLSBundle {
		return nil, errors.New("TLS identity is too large")
	}
	return parseBundle(data)
}

// parseBundle reads the plugin's certificate, its key and the host's
// certificate, in that order.
func parseBundle(data []byte) (*tls.Config, error) {
	var blocks []*pem.Block
	for len(blocks) < 3 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("TLS identity: want a certificate, a key and the host's certificate")
		}
		blocks = append(blocks, b)
	}
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(blocks[0]), pem.EncodeToMemory(blocks[1]))
	if err != nil {
		return nil, fmt.Errorf("TLS identity: %w", err)
	}
	host, err := x509.ParseCertificate(blocks[2].Bytes)
	if err != nil {
		return nil, fmt.Errorf("TLS identity: host certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(host)
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}
