package wire

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// ServePipe serves impl over the pipe transport, reading calls from in and
// writing answers to out, until in ends (the host closed it or died). Each
// call runs in its own goroutine, bounded by base and by the host's
// cancellation of it, through the same grpcServer methods as over gRPC.
// It returns once in ends; calls still running are cancelled, and
// Inflight counts them until they are done.
func ServePipe(base context.Context, impl Executor, in io.Reader, out io.Writer) error {
	base, stop := context.WithCancel(base)
	defer stop()
	s := &grpcServer{impl: impl, base: base}
	w := &frameWriter{w: out}
	var mu sync.Mutex
	calls := map[uint32]context.CancelFunc{}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		f, err := readFrame(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read call: %w", err)
		}
		if f.kind == kindCancel {
			mu.Lock()
			if cancel := calls[f.id]; cancel != nil {
				cancel()
			}
			mu.Unlock()
			continue
		}
		ctx, cancel := context.WithCancel(base)
		mu.Lock()
		calls[f.id] = cancel
		mu.Unlock()
		go func() {
			defer func() {
				mu.Lock()
				delete(calls, f.id)
				mu.Unlock()
				cancel()
			}()
			servePipeCall(ctx, s, w, f)
		}()
	}
}

// servePipeCall answers one call; a write that fails means the host is
// gone, and the read loop sees that too.
func servePipeCall(ctx context.Context, s *grpcServer, w *frameWriter, f frame) {
	var reply proto.Message
	var err error
	switch f.kind {
	case kindInfo:
		reply, err = s.Info(ctx, &executorv1.InfoRequest{})
	case kindProbe:
		reply, err = s.Probe(ctx, &executorv1.ProbeRequest{})
	case kindSetConfig:
		req := &executorv1.SetConfigRequest{}
		if err = unmarshal(f.data, req); err == nil {
			reply, err = s.SetConfig(ctx, req)
		}
	case kindExplain:
		req := &executorv1.ExecuteRequest{}
		if err = unmarshal(f.data, req); err == nil {
			reply, err = s.Explain(ctx, req)
		}
	case kindExecute:
		req := &executorv1.ExecuteRequest{}
		if err = unmarshal(f.data, req); err == nil {
			err = s.Execute(req, &pipeStream{ctx: ctx, w: w, id: f.id})
		}
		if err == nil {
			_ = w.write(kindEnd, f.id, nil)
			return
		}
	default:
		err = status.Errorf(codes.Unimplemented, "unknown call kind %q", f.kind)
	}
	if err != nil {
		_ = w.write(kindError, f.id, status.Convert(err).Proto())
		return
	}
	_ = w.write(kindReply, f.id, reply)
}

// pipeStream is Execute's server stream over the pipe transport.
type pipeStream struct {
	ctx context.Context
	w   *frameWriter
	id  uint32
}

func (p *pipeStream) Send(m *executorv1.ExecuteResponse) error {
	return p.w.write(kindReply, p.id, m)
}

func (p *pipeStream) Context() context.Context     { return p.ctx }
func (p *pipeStream) SetHeader(metadata.MD) error  { return nil }
func (p *pipeStream) SendHeader(metadata.MD) error { return nil }
func (p *pipeStream) SetTrailer(metadata.MD)       {}
func (p *pipeStream) SendMsg(m any) error {
	msg, ok := m.(*executorv1.ExecuteResponse)
	if !ok {
		return fmt.Errorf("pipe stream: cannot send %T", m)
	}
	return p.Send(msg)
}
func (p *pipeStream) RecvMsg(any) error { return io.EOF }
