// Command loopserve serves a large body over HTTP and HTTPS on a loopback
// address, for the network benchmarks of bench/run.sh:
//
//	loopserve -addr 127.0.0.2 -dir DIR
//
// GET /blob?bytes=N returns N zero bytes (default 100 MiB). It writes
// DIR/http.port, DIR/https.port and DIR/ca.pem (the authority of its
// certificate, valid for the address), then serves until killed.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

func main() {
	addr := flag.String("addr", "127.0.0.2", "loopback address to listen on")
	dir := flag.String("dir", ".", "where to write the ports and ca.pem")
	flag.Parse()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		if err != nil || n <= 0 {
			n = 100 << 20
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		io.Copy(w, io.LimitReader(zeros{}, n))
	})
	cert, caPEM := certificate(*addr)
	if err := os.WriteFile(filepath.Join(*dir, "ca.pem"), caPEM, 0o644); err != nil {
		log.Fatal(err)
	}
	for _, tlsOn := range []bool{false, true} {
		ln, err := net.Listen("tcp", *addr+":0")
		if err != nil {
			log.Fatal(err)
		}
		name := "http.port"
		if tlsOn {
			name = "https.port"
			ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		if err := os.WriteFile(filepath.Join(*dir, name), []byte(port), 0o644); err != nil {
			log.Fatal(err)
		}
		go http.Serve(ln, h)
	}
	select {}
}

// certificate makes an authority and a certificate for addr signed by it.
func certificate(addr string) (tls.Certificate, []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "loopserve CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: addr}, IPAddresses: []net.IP{net.ParseIP(addr)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: leafKey}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}
