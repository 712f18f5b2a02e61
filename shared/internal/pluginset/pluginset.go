// Package pluginset is go-plugin's side of the plugin protocol: the
// handshake, the plugin set of each contract version and the gRPC server.
// It is apart from package wire so that a binary serving only the one-shot
// fast path (wire's pipes) links no go-plugin, whose net/rpc and gRPC
// reflection service cost every process that links them their package
// initialisers (docs/performance.md).
package pluginset

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// Handshake is skillhost's go-plugin handshake (see shared.HandshakeCookieKey).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  shared.ContractVersion,
	MagicCookieKey:   shared.HandshakeCookieKey,
	MagicCookieValue: shared.HandshakeCookieValue,
}

// Versioned is the plugin set for each contract version this package
// speaks; impl is nil on the host side. base, if not nil, bounds every
// served call: Serve cancels it when the host's lifeline breaks.
func Versioned(impl shared.Executor, base context.Context) map[int]plugin.PluginSet {
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
	Impl shared.Executor
	// base, if set, bounds every served call: Serve cancels it when the
	// host's lifeline breaks.
	base context.Context
}

// GRPCServer registers the plugin side.
func (p *ExecutorPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	wire.RegisterExecutor(s, p.Impl, p.base)
	return nil
}

// GRPCClient returns the host side, an Executor. ctx is cancelled by
// go-plugin when the plugin process exits, which lets calls tell a crash
// from an ordinary error.
func (p *ExecutorPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return wire.NewGRPCClient(c, ctx.Done()), nil
}

// NewGRPCServer is go-plugin's gRPC server with wire's server options.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return plugin.DefaultGRPCServer(append(opts, wire.ServerOptions()...))
}
