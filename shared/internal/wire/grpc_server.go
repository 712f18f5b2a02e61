package wire

import (
	"context"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// flowWindow is the HTTP/2 flow-control window of the plugin connection,
// both ways. gRPC starts at 64 KiB and grows it by estimating the
// bandwidth-delay product, which over a local socket stalls the output
// stream on window updates (tens of MiB/s); a fixed window of a few MiB
// lets output flow at memory speed while bounding what is in flight.
const flowWindow = 8 << 20

// bufferPool replaces gRPC's default message buffer pool, whose tiers jump
// from 32 KiB to 1 MiB and are zeroed on every use: each output message
// (a 32 KiB read plus a few bytes of framing) cleared a whole mebibyte on
// both sides, most of the CPU of streaming output. A tier at every power
// of two bounds that to twice the message. The codec takes buffers from
// the process-wide default pool, so this sets that, once, in each process
// that talks to a plugin.
var useBufferPool = sync.OnceFunc(func() {
	var exps []uint8
	for e := uint8(8); e <= 22; e++ {
		exps = append(exps, e)
	}
	p, err := mem.NewBinaryTieredBufferPool(exps...)
	if err != nil {
		panic(err) // the exponents are constants
	}
	experimental.SetDefaultBufferPool(p)
})

// ServerOptions are the options of a plugin's gRPC server: flowWindow.
func ServerOptions() []grpc.ServerOption {
	useBufferPool()
	return []grpc.ServerOption{grpc.InitialWindowSize(flowWindow), grpc.InitialConnWindowSize(flowWindow)}
}

// RegisterExecutor registers impl as s's Executor service. base, if not
// nil, bounds every served call.
func RegisterExecutor(s *grpc.Server, impl Executor, base context.Context) {
	if base == nil {
		base = context.Background()
	}
	executorv1.RegisterExecutorServer(s, &grpcServer{impl: impl, base: base})
}

// NewGRPCClient is the host side over conn, an Executor. pluginDone closes
// when the plugin process exits, which lets calls tell a crash from an
// ordinary error.
func NewGRPCClient(conn grpc.ClientConnInterface, pluginDone <-chan struct{}) *GRPCClient {
	return &GRPCClient{client: executorv1.NewExecutorClient(conn), pluginDone: pluginDone}
}

// DialOptions are the host side's counterpart of ServerOptions.
func DialOptions() []grpc.DialOption {
	useBufferPool()
	return []grpc.DialOption{grpc.WithInitialWindowSize(flowWindow), grpc.WithInitialConnWindowSize(flowWindow)}
}

// Inflight counts running Execute calls, so a plugin whose host died can
// wait for their commands to be torn down.
var Inflight sync.WaitGroup

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
	Inflight.Add(1)
	defer Inflight.Done()
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
			n := min(len(b), shared.MaxChunk)
			if err := stream.Send(&executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Output{Output: b[:n]}}); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	}
	res, err := s.impl.Execute(ctx, requestFromProto(req), emit)
	if err != nil {
		return refusal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	infos, truncated, err := sendFiles(res.Files, req.GetFileLimit(), func(f *executorv1.File) error {
		return stream.Send(&executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_File{File: f}})
	})
	if err != nil {
		return err
	}
	out := resultToProto(res)
	out.Files, out.FilesTruncated = infos, res.FilesTruncated || truncated
	return stream.Send(&executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Result{Result: out}})
}

func (s *grpcServer) Explain(ctx context.Context, req *executorv1.ExecuteRequest) (*executorv1.ExplainResponse, error) {
	ex, ok := s.impl.(Explainer)
	if !ok {
		return nil, status.Error(codes.Unimplemented, shared.ErrNotExplainable.Error())
	}
	e, err := ex.Explain(ctx, requestFromProto(req))
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	return &executorv1.ExplainResponse{Format: e.Format, Text: []byte(e.Text), Argv: toBytes(e.Argv...), Readable: toBytes(e.Readable...)}, nil
}

func (s *grpcServer) SetConfig(ctx context.Context, req *executorv1.SetConfigRequest) (*executorv1.SetConfigResponse, error) {
	c, ok := s.impl.(Configurable)
	if !ok {
		return nil, status.Error(codes.Unimplemented, shared.ErrNotConfigurable.Error())
	}
	problems, err := c.SetConfig(ctx, req.GetConfig())
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	resp := &executorv1.SetConfigResponse{}
	for _, p := range problems {
		resp.Problems = append(resp.Problems, &executorv1.ConfigProblem{Key: p.Key, Message: p.Message})
	}
	return resp, nil
}

// refusal is a backend's error as a FailedPrecondition status, with the
// reason of a shared.RefusedError as its ErrorInfo detail.
func refusal(err error) error {
	st := status.New(codes.FailedPrecondition, err.Error())
	if reason := shared.RefusedFor(err); reason != "" {
		if withReason, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: ReasonDomain}); derr == nil {
			st = withReason
		}
	}
	return st.Err()
}

// ReasonDomain is the ErrorInfo domain of skillhost's reason codes.
const ReasonDomain = "skillhost.dev"
