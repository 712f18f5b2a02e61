package serving

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/skillhost/skillhost/shared"
)

// Logged wraps impl so every call's context carries l (LoggerFrom),
// keeping exactly the optional interfaces impl has (Explainer,
// Configurable), which the serving code asks for.
func Logged(impl shared.Executor, l hclog.Logger) shared.Executor {
	b := logged{impl: impl, log: l}
	_, explains := impl.(shared.Explainer)
	_, configures := impl.(shared.Configurable)
	switch {
	case explains && configures:
		return loggedBoth{b}
	case explains:
		return loggedExplainer{b}
	case configures:
		return loggedConfigurable{b}
	}
	return b
}

type logged struct {
	impl shared.Executor
	log  hclog.Logger
}

func (b logged) ctx(ctx context.Context) context.Context { return WithLoggerContext(ctx, b.log) }

func (b logged) Info(ctx context.Context) (shared.Info, error) { return b.impl.Info(b.ctx(ctx)) }

func (b logged) Probe(ctx context.Context) (shared.Probe, error) { return b.impl.Probe(b.ctx(ctx)) }

func (b logged) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	return b.impl.Execute(b.ctx(ctx), req, emit)
}

func (b logged) explain(ctx context.Context, req shared.Request) (shared.Explanation, error) {
	return b.impl.(shared.Explainer).Explain(b.ctx(ctx), req)
}

func (b logged) setConfig(ctx context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	return b.impl.(shared.Configurable).SetConfig(b.ctx(ctx), doc)
}

type loggedExplainer struct{ logged }

func (b loggedExplainer) Explain(ctx context.Context, req shared.Request) (shared.Explanation, error) {
	return b.explain(ctx, req)
}

type loggedConfigurable struct{ logged }

func (b loggedConfigurable) SetConfig(ctx context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	return b.setConfig(ctx, doc)
}

type loggedBoth struct{ logged }

func (b loggedBoth) Explain(ctx context.Context, req shared.Request) (shared.Explanation, error) {
	return b.explain(ctx, req)
}

func (b loggedBoth) SetConfig(ctx context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	return b.setConfig(ctx, doc)
}
