package wire

import (
	"bufio"
	"context"
	"io"
	"sync"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// NewPipeClient is the host side of the pipe transport: the same
// GRPCClient as over gRPC, asking through frames written to out (the
// plugin's input) and answered on in (its output). pluginDone closes when
// the plugin process has exited, which tells a crash from an error as it
// does over gRPC.
func NewPipeClient(in io.Reader, out io.Writer, pluginDone <-chan struct{}) *GRPCClient {
	pc := &pipeClient{w: &frameWriter{w: out}, calls: map[uint32]*pipeCall{}, done: make(chan struct{})}
	go pc.read(bufio.NewReaderSize(in, 64<<10))
	return &GRPCClient{client: pc, pluginDone: pluginDone}
}

// pipeClient is executorv1.ExecutorClient over the pipe transport.
type pipeClient struct {
	w *frameWriter

	mu    sync.Mutex
	next  uint32
	calls map[uint32]*pipeCall

	done    chan struct{} // closed when the plugin's output ends
	readErr error         // why; read after done
}

// pipeCall receives one call's frames until finish.
type pipeCall struct {
	frames chan frame
	gone   chan struct{}
}

// read hands each frame to its call, dropping those of calls that are
// finished, until the plugin's output ends.
func (c *pipeClient) read(r *bufio.Reader) {
	defer close(c.done)
	for {
		f, err := readFrame(r)
		if err != nil {
			c.readErr = err
			return
		}
		c.mu.Lock()
		call := c.calls[f.id]
		c.mu.Unlock()
		if call == nil {
			continue
		}
		select {
		case call.frames <- f:
		case <-call.gone:
		}
	}
}

func (c *pipeClient) start(kind byte, req proto.Message) (uint32, *pipeCall, error) {
	call := &pipeCall{frames: make(chan frame, 16), gone: make(chan struct{})}
	c.mu.Lock()
	c.next++
	id := c.next
	c.calls[id] = call
	c.mu.Unlock()
	if err := c.w.write(kind, id, req); err != nil {
		c.finish(id, call)
		return 0, nil, status.Errorf(codes.Unavailable, "plugin pipe: %v", err)
	}
	return id, call, nil
}

func (c *pipeClient) finish(id uint32, call *pipeCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[id] == call {
		delete(c.calls, id)
		close(call.gone)
	}
}

// cancel asks the plugin to cancel call id; the answer, if any, is dropped.
func (c *pipeClient) cancel(id uint32) { _ = c.w.write(kindCancel, id, nil) }

// frame waits for call's next frame. A frame that arrived before the
// plugin's output ended is still delivered.
func (c *pipeClient) frame(ctx context.Context, call *pipeCall) (frame, error) {
	select {
	case f := <-call.frames:
		return f, nil
	case <-ctx.Done():
		return frame{}, status.FromContextError(ctx.Err()).Err()
	case <-c.done:
		select {
		case f := <-call.frames:
			return f, nil
		default:
		}
		detail := "the plugin closed its pipe"
		if c.readErr != nil && c.readErr != io.EOF {
			detail += ": " + c.readErr.Error()
		}
		return frame{}, status.Error(codes.Unavailable, detail)
	}
}

// decode reads a reply frame into resp, or an error frame as its status.
func decode(f frame, resp proto.Message) error {
	switch f.kind {
	case kindReply:
		if err := unmarshal(f.data, resp); err != nil {
			return status.Errorf(codes.Internal, "plugin pipe: bad reply: %v", err)
		}
		return nil
	case kindError:
		st := &spb.Status{}
		if err := unmarshal(f.data, st); err != nil {
			return status.Errorf(codes.Internal, "plugin pipe: bad error: %v", err)
		}
		return status.FromProto(st).Err()
	}
	return status.Errorf(codes.Internal, "plugin pipe: unexpected frame %q", f.kind)
}

func (c *pipeClient) unary(ctx context.Context, kind byte, req, resp proto.Message) error {
	id, call, err := c.start(kind, req)
	if err != nil {
		return err
	}
	defer c.finish(id, call)
	f, err := c.frame(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			c.cancel(id)
		}
		return err
	}
	return decode(f, resp)
}

func (c *pipeClient) Info(ctx context.Context, in *executorv1.InfoRequest, _ ...grpc.CallOption) (*executorv1.InfoResponse, error) {
	resp := &executorv1.InfoResponse{}
	return resp, c.unary(ctx, kindInfo, in, resp)
}

func (c *pipeClient) Probe(ctx context.Context, in *executorv1.ProbeRequest, _ ...grpc.CallOption) (*executorv1.ProbeResponse, error) {
	resp := &executorv1.ProbeResponse{}
	return resp, c.unary(ctx, kindProbe, in, resp)
}

func (c *pipeClient) SetConfig(ctx context.Context, in *executorv1.SetConfigRequest, _ ...grpc.CallOption) (*executorv1.SetConfigResponse, error) {
	resp := &executorv1.SetConfigResponse{}
	return resp, c.unary(ctx, kindSetConfig, in, resp)
}

func (c *pipeClient) Explain(ctx context.Context, in *executorv1.ExecuteRequest, _ ...grpc.CallOption) (*executorv1.ExplainResponse, error) {
	resp := &executorv1.ExplainResponse{}
	return resp, c.unary(ctx, kindExplain, in, resp)
}

// Execute starts the call; cancelling ctx cancels it in the plugin, as
// over gRPC.
func (c *pipeClient) Execute(ctx context.Context, in *executorv1.ExecuteRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[executorv1.ExecuteResponse], error) {
	id, call, err := c.start(kindExecute, in)
	if err != nil {
		return nil, err
	}
	s := &pipeRecv{c: c, ctx: ctx, id: id, call: call}
	s.stop = context.AfterFunc(ctx, func() { c.cancel(id); c.finish(id, call) })
	return s, nil
}

// pipeRecv is Execute's client stream over the pipe transport.
type pipeRecv struct {
	c    *pipeClient
	ctx  context.Context
	id   uint32
	call *pipeCall
	stop func() bool
}

func (s *pipeRecv) Recv() (*executorv1.ExecuteResponse, error) {
	f, err := s.c.frame(s.ctx, s.call)
	if err == nil && f.kind == kindEnd {
		err = io.EOF
	}
	if err == nil {
		m := &executorv1.ExecuteResponse{}
		if err = decode(f, m); err == nil {
			return m, nil
		}
	}
	s.stop()
	s.c.finish(s.id, s.call)
	return nil, err
}

func (s *pipeRecv) Header() (metadata.MD, error) { return nil, nil }
func (s *pipeRecv) Trailer() metadata.MD         { return nil }
func (s *pipeRecv) CloseSend() error             { return nil }
func (s *pipeRecv) Context() context.Context     { return s.ctx }
func (s *pipeRecv) SendMsg(any) error            { return nil }
func (s *pipeRecv) RecvMsg(m any) error {
	msg, ok := m.(*executorv1.ExecuteResponse)
	if !ok {
		return status.Errorf(codes.Internal, "pipe stream: cannot receive %T", m)
	}
	got, err := s.Recv()
	if err != nil {
		return err
	}
	proto.Merge(msg, got)
	return nil
}
