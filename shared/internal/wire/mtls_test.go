package wire

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
)

// handshake runs a TLS handshake between client and server configurations
// over an in-memory connection and returns the client's error.
func handshake(t *testing.T, client, server *tls.Config) error {
	t.Helper()
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		ss := tls.Server(s, server)
		err := ss.Handshake()
		if err == nil {
			// TLS 1.3 checks the client's certificate after the client
			// thinks it is done; a read surfaces the verdict to it.
			_, err = ss.Write([]byte{1})
		}
		done <- err
		s.Close()
	}()
	cc := tls.Client(c, client)
	err := cc.Handshake()
	if err == nil {
		_, err = cc.Read(make([]byte, 1))
	}
	<-done
	return err
}

func TestTLSPairAuthenticatesBothEnds(t *testing.T) {
	pair, err := NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	server, err := parseBundle(pair.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, pair.Client, server); err != nil {
		t.Fatalf("matching pair: %v", err)
	}
	other, err := NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	otherServer, err := parseBundle(other.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	// A client with another host's identity, and a server with another
	// plugin's, are both refused.
	if err := handshake(t, other.Client, server); err == nil {
		t.Error("a foreign client certificate was accepted")
	}
	if err := handshake(t, pair.Client, otherServer); err == nil {
		t.Error("a foreign server certificate was accepted")
	}
	noCert := pair.Client.Clone()
	noCert.Certificates = nil
	if err := handshake(t, noCert, server); err == nil {
		t.Error("a client without a certificate was accepted")
	}
}

func TestParseBundleRejectsIncompleteInput(t *testing.T) {
	pair, err := NewTLSPair()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("not pem at all"),
		"truncated": pair.Bundle[:len(pair.Bundle)/2],
	} {
		if _, err := parseBundle(data); err == nil || !strings.Contains(err.Error(), "TLS identity") {
			t.Errorf("%s: err = %v, want a TLS identity error", name, err)
		}
	}
}
