package shared

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	executorv1 "github.com/skillhost/skillhost/shared/proto/executor/v1"
)

// MaxChunk is the largest output chunk sent in one message, far below
// gRPC's 4 MiB message limit.
const MaxChunk = 64 << 10

// grpcServer is the plugin side of the protocol: it turns RPCs into calls
// on an Executor.
type grpcServer struct {
	executorv1.UnimplementedExecutorServer
	impl Executor
	base context.Context
}

func (s *grpcServer) Info(ctx context.Context, _ *executorv1.InfoRequest) (*executorv1.InfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return infoToProto(info), nil
}

func (s *grpcServer) Probe(ctx context.Context, _ *executorv1.ProbeRequest) (*executorv1.ProbeResponse, error) {
	p, err := s.impl.Probe(ctx)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return probeToProto(p), nil
}

func (s *grpcServer) Execute(req *executorv1.ExecuteRequest, stream executorv1.Executor_ExecuteServer) error {
	inflight.Add(1)
	defer inflight.Done()
	// The call ends when the host cancels it or when the host itself is
	// gone (the lifeline broke), whichever comes first.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()

	var mu sync.Mutex // a backend may emit from several goroutines
	emit := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		for len(b) > 0 {
			n := min(len(b), MaxChunk)
			if err := stream.Send(&executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Output{Output: b[:n]}}); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	res, err := s.impl.Execute(ctx, requestFromProto(req), emit)
	if err != nil {
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	mu.Lock()
	defer mu.Unlock()
	return stream.Send(&executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Result{Result: resultToProto(res)}})
}

func (s *grpcServer) Explain(ctx context.Context, req *executorv1.ExecuteRequest) (*executorv1.ExplainResponse, error) {
	ex, ok := s.impl.(Explainer)
	if !ok {
		return nil, status.Error(codes.Unimplemented, ErrNotExplainable.Error())
	}
	e, err := ex.Explain(ctx, requestFromProto(req))
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &executorv1.ExplainResponse{Format: e.Format, Text: []byte(e.Text), Argv: toBytes(e.Argv...)}, nil
}
