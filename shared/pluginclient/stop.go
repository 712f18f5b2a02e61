package pluginclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// Reasons a remote plugin gives, as the answer to a call its host
// cancelled, for how stopping the remote run went (shared.RefusedError
// reasons; see Conn.Execute).
const (
	// ReasonStopped: the remote side confirmed that the run stopped.
	ReasonStopped = "stopped"
	// ReasonStopUnconfirmed: the plugin asked the remote side to stop the
	// run and did not hear back that it had.
	ReasonStopUnconfirmed = "stop-unconfirmed"
)

// stopWait is how long past the request's kill grace a cancelled call of a
// one-shot remote plugin waits for the plugin to say how the stop went.
const stopWait = 30 * time.Second

// StopError is the error of a call to a remote plugin that its caller
// cancelled: whether the remote run is known to have stopped, in words a
// user can be shown. It unwraps to the cancelling context's error.
type StopError struct {
	// Confirmed: the remote side said the run stopped (or it had ended).
	Confirmed bool
	// Detail says what happened, e.g. "the worker stopped the run" or
	// "asked the worker to stop the run; it has not confirmed".
	Detail string
	cause  error
}

func (e *StopError) Error() string { return e.Detail }
func (e *StopError) Unwrap() error { return e.cause }

// StopConfirmed reports whether the remote run is known to have stopped
// (for callers that match the error by this method, without importing
// this package).
func (e *StopError) StopConfirmed() bool { return e.Confirmed }

// Info implements shared.Executor, noting whether the plugin runs
// commands elsewhere (Info.Remote).
func (c *Conn) Info(ctx context.Context) (shared.Info, error) {
	if c.pipeInfo != nil {
		// The fast path's start asked already; nothing has changed since.
		info := *c.pipeInfo
		c.remote.Store(info.Remote)
		return info, nil
	}
	info, err := c.Executor.Info(ctx)
	if err == nil {
		c.remote.Store(info.Remote)
	}
	return info, err
}

// Execute implements shared.Executor. A call to a one-shot plugin that
// runs commands elsewhere (its Info said Remote) is cancelled, when ctx
// ends, by closing the lifeline rather than the call: the plugin, whose
// only call it is, stops the remote run and answers the call, still open,
// with how that went (ReasonStopped or ReasonStopUnconfirmed), which
// Execute returns as a *StopError, after at most the request's kill grace
// and stopWait. A cancelled call would leave nobody to hear that answer,
// and the host would report a remote run stopped that was only asked to.
func (c *Conn) Execute(ctx context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	if !c.oneShot || !c.remote.Load() {
		return c.Executor.Execute(ctx, req, emit)
	}
	inner, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	// Output goes on to the caller until Execute returns, never after.
	var mu sync.Mutex
	returned := false
	defer func() { mu.Lock(); returned = true; mu.Unlock() }()
	type answer struct {
		res shared.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.Executor.Execute(inner, req, func(b []byte) error {
			mu.Lock()
			defer mu.Unlock()
			if returned {
				return context.Canceled
			}
			return emit(b)
		})
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
	}
	c.closeLifeline()
	wait := max(req.KillGrace, 0) + stopWait
	select {
	case a := <-done:
		return shared.Result{}, stopAnswer(ctx.Err(), a.err)
	case <-time.After(wait):
		return shared.Result{}, &StopError{cause: ctx.Err(),
			Detail: fmt.Sprintf("asked the plugin to stop the remote run; it has not confirmed within %s", wait)}
	}
}

// stopAnswer reads the answer of a cancelled call to a remote plugin.
func stopAnswer(cause, err error) *StopError {
	if err == nil {
		// A result: the run ended before the stop reached it.
		return &StopError{Confirmed: true, cause: cause, Detail: "the run had ended"}
	}
	var r *shared.RefusedError
	if errors.As(err, &r) {
		switch r.Reason {
		case ReasonStopped:
			return &StopError{Confirmed: true, cause: cause, Detail: r.Err.Error()}
		case ReasonStopUnconfirmed:
			return &StopError{cause: cause, Detail: r.Err.Error()}
		}
	}
	return &StopError{cause: cause, Detail: "asked the plugin to stop the remote run; it did not confirm: " + err.Error()}
}

func (c *Conn) closeLifeline() {
	c.lifelineOnce.Do(func() { c.lifeline.Close() })
}
