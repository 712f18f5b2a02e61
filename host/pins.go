package host

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillhost/skillhost/host/config"
	"github.com/skillhost/skillhost/host/internal/sandbox"
)

// Pins is what Pin recorded.
type Pins struct {
	// Config is the configuration file written.
	Config string `json:"config"`
	// Sums maps each pinned plugin's name to its SHA-256.
	Sums map[string]string `json:"pinned"`
	// Previous maps each pinned plugin's name to the pin it had before in
	// the configuration in effect ("" for none): a name whose sum differs
	// from its previous one was re-pinned.
	Previous map[string]string `json:"previous"`
}

// Changed reports whether Pin changed the pin of name: it had another sum
// or none.
func (p Pins) Changed(name string) bool { return p.Previous[name] != p.Sums[name] }

// Pin records the current SHA-256 of the named discovered plugins, or of
// every discovered plugin when no name is given, under plugins.sha256 in
// the configuration file: the file the host was opened with, else the one
// Load would read (--config, $SKILLHOST_CONFIG, the default location),
// created if need be. The file keeps its formatting and comments and other
// plugins' pins (see config.WritePins). Warnings about plugin discovery go
// to Warn before anything is written. Finding no plugin, or a name that is
// not a discovered plugin (a *UsageError), is an error, and nothing is
// written then.
func (h *Host) Pin(names ...string) (Pins, error) {
	sums, warnings, err := h.pinSums(names)
	for _, w := range warnings {
		h.Warn("%s", w)
	}
	if err != nil {
		return Pins{}, err
	}
	if len(sums) == 0 {
		return Pins{}, fmt.Errorf("no sandbox plugins found in %s", strings.Join(h.Sandbox().Dirs(), ", "))
	}
	path := h.Config.Source
	if path == "" {
		path, _ = config.Path(h.configPath)
	}
	previous := map[string]string{}
	for name := range sums {
		previous[name] = h.Config.Plugins.SHA256[name]
	}
	if err := config.WritePins(path, sums); err != nil {
		return Pins{}, err
	}
	return Pins{Sums: sums, Previous: previous, Config: path}, nil
}

// pinSums returns the current SHA-256 of the named plugins, or of all of
// them when names is empty.
func (h *Host) pinSums(names []string) (map[string]string, []string, error) {
	if len(names) == 0 {
		return h.PinAll()
	}
	found, warnings := h.Sandbox().Plugins()
	sums := map[string]string{}
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		c, ok := found[name]
		if !ok {
			have := slices.Sorted(maps.Keys(found))
			list := "none"
			if len(have) > 0 {
				list = strings.Join(have, ", ")
			}
			return nil, warnings, &UsageError{fmt.Errorf("no sandbox plugin %q to pin: there is no %s%s in %s (found: %s; skillhost plugins lists them)",
				name, sandbox.BinaryPrefix, name, strings.Join(h.Sandbox().Dirs(), ", "), list)}
		}
		s, err := sandbox.Sums(c)
		if err != nil {
			return nil, warnings, err
		}
		maps.Copy(sums, s)
	}
	return sums, warnings, nil
}
