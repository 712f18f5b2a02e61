// Package egressproxy gives the Landlock backend its egress proxy
// (shared/egress/proxy), for network by name:
//
//	landlock.New(landlock.WithEgressProxy(egressproxy.Start))
//
// It is a package of its own so that a build without network by name
// (skillhost-oneshot-landlock) links neither the proxy nor its TLS stack.
package egressproxy

import (
	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/plugins/landlock"
	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/egress/proxy"
)

// Start starts the proxy of one run whose grant's network is g.
func Start(g *shared.Egress, log hclog.Logger) (landlock.EgressProxy, error) {
	p, err := proxy.Start(proxy.Config{Egress: g, Logger: log})
	if err != nil {
		// Not a nil *Proxy in a non-nil interface.
		return nil, err
	}
	return p, nil
}
