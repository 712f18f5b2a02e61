package temporal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"
)

// sealedEncoding marks a payload sealed by the codec.
const sealedEncoding = "binary/skillhost-aes256gcm"

// sealer encrypts every payload (requests, output, results, skill
// chunks) with AES-256-GCM under a key the host and its workers share, so
// the cluster stores and forwards only ciphertext: what a request holds
// (its environment, its arguments, a credential) is not readable in the
// cluster's history.
type sealer struct{ aead cipher.AEAD }

// readKey reads a 32-byte key from a file, as 64 hex digits or base64.
func readKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("codec key: %w", err)
	}
	text := strings.TrimSpace(string(data))
	key, err := hex.DecodeString(text)
	if err != nil {
		key, err = base64.StdEncoding.DecodeString(text)
	}
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("codec key %s: want 32 bytes, as 64 hex digits or base64 (openssl rand -hex 32)", path)
	}
	return key, nil
}

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// Encode implements converter.PayloadCodec.
func (s *sealer) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, s.aead.NonceSize())
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte(sealedEncoding)},
			Data: s.aead.Seal(nonce, nonce, plain, nil)}
	}
	return out, nil
}

// Decode implements converter.PayloadCodec. A payload that is not sealed
// is refused: with a key set, everything this backend reads was sealed by
// a holder of it.
func (s *sealer) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()["encoding"]) != sealedEncoding {
			return nil, errors.New("a payload is not sealed with the fleet's codec key")
		}
		n := s.aead.NonceSize()
		if len(p.GetData()) < n {
			return nil, errors.New("a sealed payload is too short")
		}
		plain, err := s.aead.Open(nil, p.GetData()[:n], p.GetData()[n:], nil)
		if err != nil {
			return nil, errors.New("a payload does not open with the fleet's codec key")
		}
		var q commonpb.Payload
		if err := proto.Unmarshal(plain, &q); err != nil {
			return nil, err
		}
		out[i] = &q
	}
	return out, nil
}
