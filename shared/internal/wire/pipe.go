package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/skillhost/skillhost/shared"
)

// The pipe transport is the one-shot fast path: a host that makes a single
// call starts the plugin with two inherited pipes instead of go-plugin's
// socket, TLS and gRPC, and sends the very messages of the gRPC service,
// framed, over them. Both ends run the same code as over gRPC: the plugin's
// grpcServer methods answer, and the host's GRPCClient asks through an
// ExecutorClient that writes frames. Only the transport differs, so the
// contract's semantics (refusals and their reasons, output chunks, files,
// cancellation, crashes) are the gRPC path's by construction.
//
// A frame is a kind byte, a call id and a length (both big-endian uint32),
// then that many bytes of a protobuf message. Calls are multiplexed by id,
// so concurrent calls work as over gRPC.

// EnvPipe names, in the plugin's environment, the pipe transport's file
// descriptors and the host's contract version: "IN,OUT,VERSION". A plugin
// that does not know it ignores it and fails go-plugin's handshake check
// (no magic cookie), and the host then starts it the ordinary way.
const EnvPipe = "SKILLHOST_PLUGIN_PIPE"

// PipeEnv is the value of EnvPipe for descriptors in and out.
func PipeEnv(in, out int) string {
	return fmt.Sprintf("%s=%d,%d,%d", EnvPipe, in, out, shared.ContractVersion)
}

// ParsePipeEnv reads EnvPipe's value. It fails for a contract version this
// package does not speak.
func ParsePipeEnv(v string) (in, out int, err error) {
	parts := strings.Split(v, ",")
	if len(parts) != 3 {
		return 0, 0, fmt.Errorf("%s=%q: want IN,OUT,VERSION", EnvPipe, v)
	}
	var n [3]int
	for i, p := range parts {
		if n[i], err = strconv.Atoi(p); err != nil {
			return 0, 0, fmt.Errorf("%s=%q: %w", EnvPipe, v, err)
		}
	}
	if n[2] != shared.ContractVersion {
		return 0, 0, fmt.Errorf("%s: the host speaks contract version %d, this plugin %d", EnvPipe, n[2], shared.ContractVersion)
	}
	if n[0] < 3 || n[1] < 3 {
		return 0, 0, fmt.Errorf("%s=%q: descriptors must be 3 or above", EnvPipe, v)
	}
	return n[0], n[1], nil
}

// Frame kinds. Host to plugin: a call's request, or the cancellation of a
// call. Plugin to host: a reply (the whole answer of a unary call, or one
// event of Execute's stream), the end of a stream, or an error (a gRPC
// status) that ends the call.
const (
	kindInfo      byte = 'i'
	kindProbe     byte = 'p'
	kindSetConfig byte = 'c'
	kindExecute   byte = 'x'
	kindExplain   byte = 'y'
	kindCancel    byte = 'k'
	kindReply     byte = 'r'
	kindEnd       byte = 'd'
	kindError     byte = 'e'
)

// maxFrame bounds a frame's length: more is a broken or hostile peer. It is
// gRPC's default limit on a received message, which bounds the same
// messages on the gRPC path (output and file chunks are at most
// shared.MaxChunk), so neither side can be made to hold more at once.
const maxFrame = 4 << 20

// vtMessage is a contract message with generated marshalling
// (executor_vtproto.pb.go). The fast path uses it: proto.Marshal and
// Unmarshal build each message type's reflection tables on first use,
// about 4 ms of a one-shot run's CPU between host and plugin. The bytes on
// the wire are the same protobuf, though unlike proto.Marshal the
// generated code does not refuse a string field that holds invalid UTF-8.
type vtMessage interface {
	MarshalVT() ([]byte, error)
	UnmarshalVT([]byte) error
}

// marshal encodes m, through its generated code where it has one.
func marshal(m proto.Message) ([]byte, error) {
	if v, ok := m.(vtMessage); ok {
		return v.MarshalVT()
	}
	return proto.Marshal(m)
}

// unmarshal decodes data into m, a message just made, through its
// generated code where it has one.
func unmarshal(data []byte, m proto.Message) error {
	if v, ok := m.(vtMessage); ok {
		return v.UnmarshalVT(data)
	}
	return proto.Unmarshal(data, m)
}

type frame struct {
	kind byte
	id   uint32
	data []byte
}

// frameWriter writes whole frames from any goroutine.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (fw *frameWriter) write(kind byte, id uint32, m proto.Message) error {
	var data []byte
	if m != nil {
		var err error
		if data, err = marshal(m); err != nil {
			return fmt.Errorf("encode frame: %w", err)
		}
	}
	if len(data) > maxFrame {
		return fmt.Errorf("frame of %d bytes is over the %d-byte limit", len(data), maxFrame)
	}
	buf := make([]byte, 9, 9+len(data))
	buf[0] = kind
	binary.BigEndian.PutUint32(buf[1:5], id)
	binary.BigEndian.PutUint32(buf[5:9], uint32(len(data)))
	buf = append(buf, data...)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(buf)
	return err
}

func readFrame(r *bufio.Reader) (frame, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[5:9])
	if n > maxFrame {
		return frame{}, fmt.Errorf("frame of %d bytes is over the %d-byte limit", n, maxFrame)
	}
	f := frame{kind: hdr[0], id: binary.BigEndian.Uint32(hdr[1:5]), data: make([]byte, n)}
	if _, err := io.ReadFull(r, f.data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, err
	}
	return f, nil
}
