package shared

import (
	"context"
	"errors"
)

// Configurable is implemented by backends with settings of their own. The
// operator writes them under plugins.config.<name> in the host's
// configuration; the host passes that document through without reading it.
// It is optional: a backend without it takes no settings.
type Configurable interface {
	// SetConfig validates doc, a JSON object ("{}" when the operator set
	// nothing), and puts it in force if it is valid. It returns what is
	// wrong with it; an error means the backend could not look at all. The
	// host calls it once per process, after Info and before Probe, so
	// Probe may depend on the settings.
	SetConfig(ctx context.Context, doc []byte) ([]ConfigProblem, error)
}

// ConfigProblem is one thing wrong with a backend's settings.
type ConfigProblem struct {
	// Key is the dotted path of the offending key inside the backend's
	// document ("best_effort"), or "" for the document as a whole.
	Key string `json:"key,omitempty"`
	// Message says what is wrong, for a human.
	Message string `json:"message"`
}

func (p ConfigProblem) String() string {
	if p.Key == "" {
		return p.Message
	}
	return p.Key + ": " + p.Message
}

// ErrNotConfigurable is returned by SetConfig on the host side for a
// backend that takes no settings.
var ErrNotConfigurable = errors.New("this backend takes no settings")
