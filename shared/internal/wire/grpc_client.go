package wire

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// ErrCrashed matches the errors of calls that failed because the plugin
// process died (see CrashError).
var ErrCrashed = errors.New("crashed")

// CrashError is the error of a call that failed because the plugin process
// died under it. It matches ErrCrashed; Detail is what gRPC said.
type CrashError struct{ Detail string }

func (e *CrashError) Error() string { return ErrCrashed.Error() + ": " + e.Detail }

// Is makes errors.Is(err, ErrCrashed) hold.
func (e *CrashError) Is(target error) bool { return target == ErrCrashed }

// crashWait bounds how long a failed call waits for go-plugin to notice
// that the plugin process exited before it decides the failure was not a
// crash.
const crashWait = 2 * time.Second

// GRPCClient is the host side of the protocol: an Executor backed by a
// plugin process.
type GRPCClient struct {
	client     executorv1.ExecutorClient
	pluginDone <-chan struct{}
}

// Info implements Executor.
func (c *GRPCClient) Info(ctx context.Context) (Info, error) {
	resp, err := c.client.Info(ctx, &executorv1.InfoRequest{})
	if err != nil {
		return Info{}, c.callError(ctx, err)
	}
	return infoFromProto(resp), nil
}

// Probe implements Executor.
func (c *GRPCClient) Probe(ctx context.Context) (Probe, error) {
	resp, err := c.client.Probe(ctx, &executorv1.ProbeRequest{})
	if err != nil {
		return Probe{}, c.callError(ctx, err)
	}
	return probeFromProto(resp), nil
}

// Explain implements Explainer.
func (c *GRPCClient) Explain(ctx context.Context, req Request) (Explanation, error) {
	resp, err := c.client.Explain(ctx, requestToProto(req))
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			return Explanation{}, shared.ErrNotExplainable
		}
		return Explanation{}, c.callError(ctx, err)
	}
	return Explanation{Format: resp.GetFormat(), Text: string(resp.GetText()), Argv: toStrings(resp.GetArgv()), Readable: toStrings(resp.GetReadable())}, nil
}

// SetConfig implements Configurable. A backend that answers UNIMPLEMENTED
// (it takes no settings) gives shared.ErrNotConfigurable.
func (c *GRPCClient) SetConfig(ctx context.Context, doc []byte) ([]ConfigProblem, error) {
	resp, err := c.client.SetConfig(ctx, &executorv1.SetConfigRequest{Config: doc})
	if err != nil {
		if status.Code(err) == codes.Unimplemented {
			return nil, shared.ErrNotConfigurable
		}
		return nil, c.callError(ctx, err)
	}
	var out []ConfigProblem
	for _, p := range resp.GetProblems() {
		out = append(out, ConfigProblem{Key: p.GetKey(), Message: p.GetMessage()})
	}
	return out, nil
}

// Execute implements Executor.
func (c *GRPCClient) Execute(ctx context.Context, req Request, emit func([]byte) error) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.client.Execute(ctx, requestToProto(req))
	if err != nil {
		return Result{}, c.callError(ctx, err)
	}
	files := fileReceiver{limit: req.FileLimit}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return Result{}, errors.New("the plugin ended the call without a result")
		}
		if err != nil {
			return Result{}, c.callError(ctx, err)
		}
		switch ev := msg.GetEvent().(type) {
		case *executorv1.ExecuteResponse_Output:
			if err := emit(ev.Output); err != nil {
				return Result{}, err
			}
		case *executorv1.ExecuteResponse_File:
			if err := files.add(ev.File); err != nil {
				return Result{}, err
			}
		case *executorv1.ExecuteResponse_Result:
			res := resultFromProto(ev.Result)
			if res.Files, err = files.check(ev.Result.GetFiles()); err != nil {
				return Result{}, err
			}
			return res, nil
		}
	}
}

// callError turns a gRPC error into a plain one, a *CrashError when the
// plugin process died under the call.
func (c *GRPCClient) callError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unavailable, codes.Canceled:
		select {
		case <-c.pluginDone:
			return &CrashError{Detail: st.Message()}
		case <-time.After(crashWait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	plain := errors.New(st.Message())
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ReasonDomain && info.GetReason() != "" {
			return shared.Refused(info.GetReason(), plain)
		}
	}
	return plain
}
