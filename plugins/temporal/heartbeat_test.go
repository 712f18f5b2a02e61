package temporal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

type ctxKey struct{}

// The SDK ends an activity's context with the error of a heartbeat call
// that failed (here as its client returns them: service errors); the job
// goes on then, and ends, with words, on every other cause.
func TestJobContextOutlivesAFailedHeartbeat(t *testing.T) {
	for _, c := range []struct {
		name  string
		cause error
		ended bool
		err   string // stoppedBy's error
	}{
		{"slow heartbeat", serviceerror.NewDeadlineExceeded("context deadline exceeded"), false, ""},
		{"cluster busy", serviceerror.NewUnavailable("busy"), false, ""},
		{"rate limited", serviceerror.NewResourceExhausted(enumspb.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT, "slow down"), false, ""},
		{"cancel asked", temporal.NewCanceledError(), true, context.Canceled.Error()},
		{"activity gone", serviceerror.NewNotFound("no such activity"), true, "the cluster no longer knows it"},
		{"worker stopping", worker.ErrWorkerShutdown, true, "its stop timeout passed"},
		{"paused", errors.New("activity paused"), true, "activity paused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sdk, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
			jctx, end := jobContext(sdk)
			defer end(nil)
			cancel(c.cause)
			<-sdk.Done()
			if jctx.Value(ctxKey{}) != "v" {
				t.Error("the job's context lost the activity's values")
			}
			if !c.ended {
				// Nothing signals that the job's context was not ended:
				// it is given a while to be (wrongly).
				select {
				case <-jctx.Done():
					t.Fatalf("the job ended on %v", c.cause)
				case <-time.After(200 * time.Millisecond):
				}
				return
			}
			<-jctx.Done()
			err := stoppedBy("w1", sdk, jctx)
			if !strings.Contains(err.Error(), c.err) {
				t.Errorf("stoppedBy = %v, want %q", err, c.err)
			}
			if temporal.IsCanceledError(c.cause) != (err == context.Canceled) {
				t.Errorf("stoppedBy = %v: a cancellation the cluster asked for is the context's error, and only it", err)
			}
		})
	}
}

// The activity's deadline ends the job, saying so.
func TestJobContextEndsAtTheDeadline(t *testing.T) {
	sdk, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	jctx, end := jobContext(sdk)
	defer end(nil)
	<-jctx.Done()
	if err := stoppedBy("w1", sdk, jctx); !strings.Contains(err.Error(), "ran out") {
		t.Errorf("stoppedBy = %v", err)
	}
}

// A cancellation beat heard itself, after the SDK gave up on a
// heartbeat, travels as a cancellation.
func TestStoppedByACancellationBeatHeard(t *testing.T) {
	sdk, cancel := context.WithCancelCause(context.Background())
	jctx, end := jobContext(sdk)
	cancel(serviceerror.NewDeadlineExceeded("slow"))
	end(temporal.NewCanceledError())
	if err := stoppedBy("w1", sdk, jctx); !temporal.IsCanceledError(err) {
		t.Errorf("stoppedBy = %v, want a cancellation", err)
	}
}
