package temporal

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// flowInput is what the run workflow needs besides the job.
type flowInput struct {
	Job          Job
	Queue        string
	QueueTimeout time.Duration
	Heartbeat    time.Duration
}

// runFlow schedules the job's one activity on the fleet's queue, and
// hands the output the worker signals, in order, to the host (a local
// activity: the host's worker runs this workflow). It is never retried: a
// script that started is not run a second time, and a job no worker took
// fails after QueueTimeout, having run nowhere.
func runFlow(ctx workflow.Context, in flowInput) (Outcome, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              in.Queue,
		ScheduleToStartTimeout: in.QueueTimeout,
		StartToCloseTimeout:    activityTimeout(in.Job.Request),
		HeartbeatTimeout:       in.Heartbeat,
		WaitForCancellation:    true,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	output := workflow.GetSignalChannel(ctx, OutputSignal)
	pass := func(c OutputChunk) {
		_ = workflow.ExecuteLocalActivity(lctx, EmitActivity, c).Get(lctx, nil)
	}
	run := workflow.ExecuteActivity(actx, ExecActivity, in.Job)
	done := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(run, func(workflow.Future) { done = true })
	sel.AddReceive(output, func(ch workflow.ReceiveChannel, _ bool) {
		var c OutputChunk
		ch.Receive(ctx, &c)
		pass(c)
	})
	for !done {
		sel.Select(ctx)
	}
	// Every signal was sent before the activity completed.
	for {
		var c OutputChunk
		if !output.ReceiveAsync(&c) {
			break
		}
		pass(c)
	}
	var out Outcome
	err := run.Get(ctx, &out)
	return out, err
}

// fetchFlow returns one chunk of a skill the host holds, from the host's
// own queue (where it runs).
func fetchFlow(ctx workflow.Context, c Chunk) ([]byte, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var data []byte
	err := workflow.ExecuteActivity(ctx, ChunkActivity, c).Get(ctx, &data)
	return data, err
}

// registerHost registers what the host's worker runs.
func registerHost(w worker.Worker, e *Executor) {
	w.RegisterWorkflowWithOptions(runFlow, workflow.RegisterOptions{Name: RunWorkflow})
	w.RegisterWorkflowWithOptions(fetchFlow, workflow.RegisterOptions{Name: FetchWorkflow})
	w.RegisterActivityWithOptions(e.chunk, activity.RegisterOptions{Name: ChunkActivity})
	w.RegisterActivityWithOptions(e.emitChunk, activity.RegisterOptions{Name: EmitActivity})
}
