package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// Handshake is skillhost's go-plugin handshake (see shared.HandshakeCookieKey).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  shared.ContractVersion,
	MagicCookieKey:   shared.HandshakeCookieKey,
	MagicCookieValue: shared.HandshakeCookieValue,
}

// VersionedPlugins is the plugin set for each contract version this package
// speaks; impl is nil on the host side. base, if not nil, bounds every
// served call: Serve cancels it when the host's lifeline breaks.
func VersionedPlugins(impl shared.Executor, base context.Context) map[int]plugin.PluginSet {
	if base == nil {
		base = context.Background()
	}
	return map[int]plugin.PluginSet{
		shared.ContractVersion: {shared.PluginName: &ExecutorPlugin{Impl: impl, base: base}},
	}
}

// ExecutorPlugin adapts an Executor to go-plugin's gRPC transport.
type ExecutorPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl serves on the plugin side; nil on the host side.
	Impl Executor
	// base, if set, bounds every served call: Serve cancels it when the
	// host's lifeline breaks.
	base context.Context
}

// GRPCServer registers the plugin side.
func (p *ExecutorPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	base := p.base
	if base == nil {
		base = context.Background()
	}
	executorv1.RegisterExecutorServer(s, &grpcServer{impl: p.Impl, base: base})
	return nil
}

// GRPCClient returns the host side, an Executor. ctx is cancelled by
// go-plugin when the plugin process exits, which lets calls tell a crash
// from an ordinary error.
func (p *ExecutorPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &GRPCClient{client: executorv1.NewExecutorClient(c), pluginDone: ctx.Done()}, nil
}
