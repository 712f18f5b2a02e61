package pluginclient

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/internal/pluginset"
	"github.com/skillhost/skillhost/shared/internal/wire"
)

// reattachEntry is one plugin's entry of shared.EnvPluginReattach, as a
// plugin in debug mode prints it (backend.ReattachLine).
type reattachEntry struct {
	Protocol        string
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            struct{ Network, String string }
}

// reattachFor is the reattach configuration shared.EnvPluginReattach names
// for the plugin binary at path (by its name, skillhost-sandbox-NAME), if
// any.
func reattachFor(path string) (*plugin.ReattachConfig, error) {
	doc := os.Getenv(shared.EnvPluginReattach)
	if doc == "" {
		return nil, nil
	}
	var all map[string]reattachEntry
	if err := json.Unmarshal([]byte(doc), &all); err != nil {
		return nil, fmt.Errorf("%s: %w (it is the JSON a plugin in debug mode prints)", shared.EnvPluginReattach, err)
	}
	e, ok := all[strings.TrimPrefix(filepath.Base(path), BinaryPrefix)]
	if !ok {
		return nil, nil
	}
	var addr net.Addr
	switch e.Addr.Network {
	case "unix":
		addr = &net.UnixAddr{Name: e.Addr.String, Net: "unix"}
	case "tcp":
		a, err := net.ResolveTCPAddr("tcp", e.Addr.String)
		if err != nil {
			return nil, fmt.Errorf("%s: address %q: %w", shared.EnvPluginReattach, e.Addr.String, err)
		}
		addr = a
	default:
		return nil, fmt.Errorf("%s: unknown network %q", shared.EnvPluginReattach, e.Addr.Network)
	}
	return &plugin.ReattachConfig{Protocol: plugin.Protocol(e.Protocol), ProtocolVersion: e.ProtocolVersion, Pid: e.Pid, Test: e.Test, Addr: addr}, nil
}

// reattached attaches to the plugin of cfg when shared.EnvPluginReattach
// names it (ok), or says why it cannot.
func reattached(cfg LaunchConfig) (c *Conn, ok bool, err error) {
	rc, err := reattachFor(cfg.Path)
	if err != nil {
		return nil, true, err
	}
	if rc == nil {
		return nil, false, nil
	}
	c, err = attach(cfg, rc)
	return c, true, err
}

// attach connects to a plugin serving in debug mode at rc instead of
// starting one; Close leaves it running.
func attach(cfg LaunchConfig, rc *plugin.ReattachConfig) (*Conn, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	// A reattached client takes the plugin set of the version the plugin
	// serves, unnegotiated.
	set, ok := pluginset.Versioned(nil, nil)[rc.ProtocolVersion]
	if !ok {
		return nil, &VersionError{Plugin: rc.ProtocolVersion, Err: fmt.Errorf("the plugin in debug mode serves contract version %d", rc.ProtocolVersion)}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginset.Handshake,
		Plugins:          set,
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  wire.DialOptions(),
		Logger:           logger,
	})
	c := &Conn{client: client, oneShot: cfg.OneShot}
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("attach to %s in debug mode (pid %d, %s): %w", filepath.Base(cfg.Path), rc.Pid, shared.EnvPluginReattach, err)
	}
	raw, err := rpc.Dispense(shared.PluginName)
	ex, ok := raw.(shared.Executor)
	if err != nil || !ok {
		client.Kill()
		return nil, fmt.Errorf("attach to %s in debug mode: no Executor served (%v)", filepath.Base(cfg.Path), err)
	}
	c.Executor = ex
	c.ContractVersion = rc.ProtocolVersion
	return c, nil
}
