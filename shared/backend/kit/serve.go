package kit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend/internal/serving"
)

// ServeFastPath is the main of a binary built on this package alone (no
// go-plugin): it serves impl to the one-shot host that started it, with
// the default logger (JSON on stderr at the host's level), and returns
// impl's Close error if it is an io.Closer. Started otherwise (by hand,
// or by a host over go-plugin, which such a binary cannot speak) it says
// so on stderr and exits with status 2.
func ServeFastPath(impl shared.Executor) error {
	served, err := serving.ServeOneShot(impl, serving.NewLogger())
	if !served {
		fmt.Fprintf(os.Stderr, "%s serves only hosts that make one call (`skillhost run`), which start it themselves; the plugin to start is skillhost-sandbox-NAME beside it\n", filepath.Base(os.Args[0]))
		os.Exit(2)
	}
	return err
}

// WithLoggerContext returns ctx carrying l, for LoggerFrom.
func WithLoggerContext(ctx context.Context, l hclog.Logger) context.Context {
	return serving.WithLoggerContext(ctx, l)
}

// LoggerFrom returns the plugin's logger from a call's context: the
// servers put it in the context of every Info, Probe, SetConfig, Explain
// and Execute. Outside a call (a test calling the backend directly) it is
// a new default logger. Plugins must log only through it: stdout belongs
// to the handshake.
func LoggerFrom(ctx context.Context) hclog.Logger { return serving.LoggerFrom(ctx) }
