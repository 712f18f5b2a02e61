package temporal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/grpc/status"
)

// jobContext is the context a job runs under: ctx, the activity's, with
// its values, ended with ctx's cause when ctx ends, except when the SDK
// ended ctx because one heartbeat call failed (heartbeatFailed). The SDK
// does that for any error of the call but a cancellation or the activity
// gone, such as a call slower than its deadline (the heartbeat throttle,
// at least one second) on a loaded cluster: the run would be killed, or
// its finished result thrown away, and the run fail with a bare "context
// canceled" though nobody cancelled it. Such a failure says nothing about
// the job: the heartbeats go on (beat), the cluster-lost watch ends a run
// whose cluster is gone, and the cluster, once it has given up on the
// activity, says so on the next heartbeat. end ends the job's context;
// the caller calls it when the job is over.
func jobContext(ctx context.Context) (jctx context.Context, end context.CancelCauseFunc) {
	jctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); !heartbeatFailed(cause) {
			cancel(cause)
		}
	})
	return jctx, func(cause error) {
		stop()
		cancel(cause)
	}
}

// heartbeatFailed reports whether cause, why the SDK ended an activity's
// context, is an error of a heartbeat call (the Temporal service's errors
// carry a gRPC status) other than the ones that end the activity: not
// found (it timed out, or its workflow ended) and the namespace gone. A
// cancellation the cluster asked for (*temporal.CanceledError), the
// activity's deadline, a paused or reset activity and the worker stopping
// are no heartbeat errors.
func heartbeatFailed(cause error) bool {
	var withStatus interface{ Status() *status.Status }
	if !errors.As(cause, &withStatus) {
		return false
	}
	var notFound *serviceerror.NotFound
	var inactive *serviceerror.NamespaceNotActive
	var noNamespace *serviceerror.NamespaceNotFound
	return !errors.As(cause, &notFound) && !errors.As(cause, &inactive) && !errors.As(cause, &noNamespace)
}

// stoppedBy is the error of a job of worker name whose context jctx (of
// jobContext on ctx) ended before its result was taken. A cancellation
// the cluster asked for, which the SDK ended ctx with, is ctx's error: the
// SDK reports it as a cancellation. One that beat heard after the SDK gave
// up on a heartbeat is the *temporal.CanceledError itself, which travels
// as one. Any other cause is said in words: never a bare "context
// canceled" that nobody asked for.
func stoppedBy(name string, ctx, jctx context.Context) error {
	cause := context.Cause(jctx)
	switch {
	case temporal.IsCanceledError(cause) && ctx.Err() != nil && context.Cause(ctx) == cause:
		return ctx.Err()
	case temporal.IsCanceledError(cause):
		return cause
	case errors.Is(cause, worker.ErrWorkerShutdown):
		return fmt.Errorf("worker %s stopped the run: the worker is shutting down, and its stop timeout passed", name)
	case errors.Is(cause, context.DeadlineExceeded):
		return fmt.Errorf("worker %s stopped the run: its time on the worker (the grant's timeout, kill grace and the skill's fetch) ran out", name)
	}
	var notFound *serviceerror.NotFound
	if errors.As(cause, &notFound) {
		return fmt.Errorf("worker %s stopped the run: the cluster no longer knows it (it timed out there, or its workflow ended)", name)
	}
	return fmt.Errorf("worker %s stopped the run: %v", name, cause)
}

// beat heartbeats a job every second, so that a cancellation reaches it
// and a dead worker is noticed, until stop or the job's context ends.
// While the activity's context (sdk) is live, the SDK sends the
// heartbeats and ends that context on a cancellation. Once the SDK has
// ended it on a failed heartbeat (see jobContext), it would pass on no
// later cancellation, so beat sends them itself and ends the job (end)
// when the cluster asks for a cancellation or no longer knows the
// activity.
type beat struct {
	sdk   context.Context
	job   context.Context
	c     client.Client
	token []byte
	end   context.CancelCauseFunc
	done  chan struct{}
	once  sync.Once
}

func newBeat(sdk, job context.Context, c client.Client, end context.CancelCauseFunc) *beat {
	b := &beat{sdk: sdk, job: job, c: c, token: activity.GetInfo(sdk).TaskToken, end: end, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-job.Done():
				return
			case <-t.C:
				b.beat()
			}
		}
	}()
	return b
}

func (b *beat) beat() {
	if b.sdk.Err() == nil {
		activity.RecordHeartbeat(b.sdk)
		return
	}
	if b.job.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(b.job, beatTimeout)
	defer cancel()
	err := b.c.RecordActivityHeartbeat(ctx, b.token)
	var notFound *serviceerror.NotFound
	if temporal.IsCanceledError(err) || errors.As(err, &notFound) {
		b.end(err)
	}
}

// beatTimeout bounds a heartbeat that beat sends itself.
const beatTimeout = 5 * time.Second

func (b *beat) stop() { b.once.Do(func() { close(b.done) }) }
