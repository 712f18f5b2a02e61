package serving

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
)

// NewLogger is the default logger of a plugin: JSON on stderr, which the
// host re-logs at the right level, at the level the host asked for.
func NewLogger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       "sandbox",
		JSONFormat: true,
		Output:     os.Stderr,
		Level:      hclog.LevelFromString(os.Getenv(shared.EnvLogLevel)),
	})
}

type loggerKey struct{}

// WithLoggerContext returns ctx carrying l, for LoggerFrom.
func WithLoggerContext(ctx context.Context, l hclog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// LoggerFrom returns the logger ctx carries (WithLoggerContext), or a new
// default logger.
func LoggerFrom(ctx context.Context) hclog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(hclog.Logger); ok {
		return l
	}
	return NewLogger()
}
