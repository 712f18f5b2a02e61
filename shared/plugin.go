package shared

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	executorv1 "github.com/skillhost/skillhost/shared/proto/executor/v1"
)

// Handshake is skillhost's go-plugin handshake. The cookie only keeps a
// plugin binary started by hand from waiting for a host that is not there;
// it is not a security measure (AutoMTLS and checksum pinning are).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ContractVersion,
	MagicCookieKey:   "SKILLHOST_SANDBOX_PLUGIN",
	MagicCookieValue: "6b1c5f2e9d8a4f03b7e2c1d0a9f8e7d6c5b4a3928170f6e5d4c3b2a190817263",
}

// PluginName is the single plugin a sandbox binary serves.
const PluginName = "executor"

// VersionedPlugins is the plugin set for each contract version this package
// speaks; impl is nil on the host side.
func VersionedPlugins(impl Executor) map[int]plugin.PluginSet {
	return pluginSet(impl, context.Background())
}

// pluginSet is VersionedPlugins with the context that bounds served calls.
func pluginSet(impl Executor, base context.Context) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ContractVersion: {PluginName: &ExecutorPlugin{Impl: impl, base: base}},
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
