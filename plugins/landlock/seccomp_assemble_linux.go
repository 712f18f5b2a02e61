//go:build linux && !amd64

package landlock

import (
	"sync"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
	"github.com/skillhost/skillhost/plugins/landlock/seccomppolicy"
)

var filterCache sync.Map // filterKey -> confiner.Filter

// seccompFilter assembles (once per kind) the filter for a run of kind
// key. Callers share the filter and must not change it.
func seccompFilter(key filterKey) (confiner.Filter, error) {
	if f, ok := filterCache.Load(key); ok {
		return f.(confiner.Filter), nil
	}
	f, err := seccomppolicy.Filter(seccomppolicy.Key{Network: key.network, Loopback: key.loopback,
		LandlockUnix: key.landlockUnix, NoMetadata: key.noMetadata})
	if err != nil {
		return nil, err
	}
	filterCache.Store(key, confiner.Filter(f))
	return f, nil
}
