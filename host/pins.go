package host

import (
	"fmt"
	"strings"

	"github.com/skillhost/skillhost/host/config"
)

// Pins is what Pin recorded.
type Pins struct {
	// Config is the configuration file written.
	Config string `json:"config"`
	// Sums maps each discovered plugin's name to its SHA-256.
	Sums map[string]string `json:"pinned"`
}

// Pin records the current SHA-256 of every discovered plugin under
// plugins.sha256 in the configuration file: the file the host was opened
// with, else the one Load would read (--config, $SKILLHOST_CONFIG, the
// default location), created if need be. The file keeps its formatting and
// comments and other plugins' pins (see config.WritePins). Warnings about
// plugin discovery go to Warn before anything is written. Finding no plugin
// is an error, and nothing is written then.
func (h *Host) Pin() (Pins, error) {
	sums, warnings, err := h.PinAll()
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
	if err := config.WritePins(path, sums); err != nil {
		return Pins{}, err
	}
	return Pins{Sums: sums, Config: path}, nil
}
