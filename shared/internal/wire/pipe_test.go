package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
)

// fakeExecutor answers as a backend would, to test the pipe transport.
type fakeExecutor struct {
	mu      sync.Mutex
	config  []byte
	cancels int
	started chan struct{} // closed by an Execute of "block"
}

func (f *fakeExecutor) Info(context.Context) (Info, error) {
	return Info{Name: "fake", Version: "1", ContractVersions: []int{shared.ContractVersion}, Remote: true,
		Enforces: shared.Enforcement{FSRead: true, Egress: true}}, nil
}

func (f *fakeExecutor) Probe(context.Context) (Probe, error) {
	return Probe{Status: shared.Unhealthy, Reason: "no cgroups", BestEffort: true}, nil
}

func (f *fakeExecutor) Execute(ctx context.Context, req Request, emit func([]byte) error) (Result, error) {
	switch req.Argv[0] {
	case "refuse":
		return Result{}, shared.Refused(shared.ReasonInterpreter, errors.New("add /opt to sandbox.interpreters"))
	case "block", "block-then-stop":
		close(f.started)
		<-ctx.Done()
		f.mu.Lock()
		f.cancels++
		f.mu.Unlock()
		if req.Argv[0] == "block-then-stop" {
			// What a remote backend answers a call its host gave up on.
			return Result{}, shared.Refused("stopped", errors.New("the worker stopped the run"))
		}
		return Result{}, ctx.Err()
	}
	// Output larger than one chunk, then files and a result.
	big := bytes.Repeat([]byte("x"), shared.MaxChunk+10)
	for _, b := range [][]byte{[]byte("hello "), big, []byte(strings.Join(req.Argv, " "))} {
		if err := emit(b); err != nil {
			return Result{}, err
		}
	}
	return Result{ExitCode: 7, Violations: []shared.Violation{{Kind: "fs", Target: "/etc/shadow"}},
		Files: []shared.File{{Path: "/out/a", Mode: 0o644, Data: []byte("file data")}}}, nil
}

func (f *fakeExecutor) SetConfig(_ context.Context, doc []byte) ([]ConfigProblem, error) {
	f.mu.Lock()
	f.config = doc
	f.mu.Unlock()
	if bytes.Contains(doc, []byte("bad")) {
		return []ConfigProblem{{Key: "bad", Message: "unknown setting"}}, nil
	}
	return nil, nil
}

// noConfigExecutor takes no settings: it lacks SetConfig.
type noConfigExecutor struct{ shared.Executor }

// pipePair serves impl over real pipes and returns the host's client, and
// a function that ends the plugin side as a crash would (its pipes close
// and the process is gone).
func pipePair(t *testing.T, impl Executor) (*GRPCClient, func()) {
	t.Helper()
	callsR, callsW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	answersR, answersW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := ServePipe(context.Background(), impl, callsR, answersW); err != nil {
			t.Errorf("ServePipe: %v", err)
		}
	}()
	var once sync.Once
	crash := func() {
		once.Do(func() {
			answersW.Close()
			close(done)
			callsW.Close()
			<-served
		})
	}
	t.Cleanup(func() { crash(); callsR.Close(); answersR.Close() })
	return NewPipeClient(answersR, callsW, done), crash
}

func TestPipeUnaryCalls(t *testing.T) {
	impl := &fakeExecutor{}
	c, _ := pipePair(t, impl)
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || info.Name != "fake" || !info.Remote || !info.Enforces.Egress || info.ContractVersions[0] != shared.ContractVersion {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	p, err := c.Probe(ctx)
	if err != nil || p.Status != shared.Unhealthy || p.Reason != "no cgroups" || !p.BestEffort {
		t.Fatalf("Probe = %+v, %v", p, err)
	}
	for _, tc := range []struct {
		doc      string
		problems int
	}{{`{"ok": 1}`, 0}, {`{"bad": 1}`, 1}} {
		problems, err := c.SetConfig(ctx, []byte(tc.doc))
		if err != nil || len(problems) != tc.problems {
			t.Errorf("SetConfig(%s) = %v, %v; want %d problems", tc.doc, problems, err, tc.problems)
		}
		impl.mu.Lock()
		if string(impl.config) != tc.doc {
			t.Errorf("plugin got config %q, want %q", impl.config, tc.doc)
		}
		impl.mu.Unlock()
	}
	// A backend without SetConfig or Explain answers as over gRPC.
	c2, _ := pipePair(t, noConfigExecutor{impl})
	if _, err := c2.SetConfig(ctx, []byte("{}")); !errors.Is(err, shared.ErrNotConfigurable) {
		t.Errorf("SetConfig of a backend without settings: %v, want ErrNotConfigurable", err)
	}
	if _, err := c2.Explain(ctx, Request{Argv: []string{"x"}}); !errors.Is(err, shared.ErrNotExplainable) {
		t.Errorf("Explain of a backend without it: %v, want ErrNotExplainable", err)
	}
}

func TestPipeExecute(t *testing.T) {
	c, _ := pipePair(t, &fakeExecutor{})
	var out bytes.Buffer
	var chunks int
	req := Request{Argv: []string{"run", "it"}, FileLimit: 1 << 20}
	res, err := c.Execute(context.Background(), req, func(b []byte) error {
		chunks++
		if len(b) > shared.MaxChunk {
			t.Errorf("chunk of %d bytes, over MaxChunk", len(b))
		}
		out.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "hello " + strings.Repeat("x", shared.MaxChunk+10) + "run it"
	if out.String() != want || chunks != 4 {
		t.Errorf("output of %d bytes in %d chunks, want %d bytes in 4", out.Len(), chunks, len(want))
	}
	if res.ExitCode != 7 || len(res.Violations) != 1 || res.Violations[0].Target != "/etc/shadow" {
		t.Errorf("result = %+v", res)
	}
	if len(res.Files) != 1 || string(res.Files[0].Data) != "file data" || res.Files[0].Mode != 0o644 {
		t.Errorf("files = %+v", res.Files)
	}
	// A refusal keeps its reason across the pipe.
	_, err = c.Execute(context.Background(), Request{Argv: []string{"refuse"}}, func([]byte) error { return nil })
	if shared.RefusedFor(err) != shared.ReasonInterpreter || !strings.Contains(err.Error(), "sandbox.interpreters") {
		t.Errorf("refusal = %v (reason %q)", err, shared.RefusedFor(err))
	}
}

// TestPipeConcurrentCalls: calls are multiplexed, each output kept apart.
func TestPipeConcurrentCalls(t *testing.T) {
	c, _ := pipePair(t, &fakeExecutor{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out bytes.Buffer
			tag := fmt.Sprintf("call-%d", i)
			res, err := c.Execute(context.Background(), Request{Argv: []string{tag}}, func(b []byte) error { out.Write(b); return nil })
			if err != nil || res.ExitCode != 7 || !strings.HasSuffix(out.String(), tag) || out.Len() != len("hello ")+shared.MaxChunk+10+len(tag) {
				t.Errorf("%s: %v, exit %d, %d bytes", tag, err, res.ExitCode, out.Len())
			}
		}()
	}
	wg.Wait()
}

// TestPipeCancel: cancelling the host's context cancels the call in the
// plugin, and the host returns the context's error.
func TestPipeCancel(t *testing.T) {
	impl := &fakeExecutor{started: make(chan struct{})}
	c, _ := pipePair(t, impl)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Execute(ctx, Request{Argv: []string{"block"}}, func([]byte) error { return nil })
		errc <- err
	}()
	<-impl.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		impl.mu.Lock()
		n := impl.cancels
		impl.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin's call was not cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPipeLifeline: the host closing its end of the call pipe (the
// lifeline) cancels the plugin's calls, and a call still open hears how
// that went, as a one-shot remote plugin's stop is reported.
func TestPipeLifeline(t *testing.T) {
	impl := &fakeExecutor{started: make(chan struct{})}
	callsR, callsW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	answersR, answersW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { callsR.Close(); answersR.Close(); answersW.Close() })
	go func() { _ = ServePipe(context.Background(), impl, callsR, answersW) }()
	c := NewPipeClient(answersR, callsW, make(chan struct{}))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Execute(context.Background(), Request{Argv: []string{"block-then-stop"}}, func([]byte) error { return nil })
		errc <- err
	}()
	<-impl.started
	callsW.Close()
	select {
	case err := <-errc:
		if shared.RefusedFor(err) != "stopped" || err.Error() != "the worker stopped the run" {
			t.Errorf("answer after the lifeline closed: %v (reason %q)", err, shared.RefusedFor(err))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer after the lifeline closed")
	}
}

// TestPipeCrash: a plugin that goes away under a call is a crash, as over
// gRPC, not an ordinary error.
func TestPipeCrash(t *testing.T) {
	impl := &fakeExecutor{started: make(chan struct{})}
	c, crash := pipePair(t, impl)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Execute(context.Background(), Request{Argv: []string{"block"}}, func([]byte) error { return nil })
		errc <- err
	}()
	<-impl.started
	crash()
	if err := <-errc; !errors.Is(err, ErrCrashed) {
		t.Errorf("call to a plugin that went away: %v, want ErrCrashed", err)
	}
	if _, err := c.Info(context.Background()); !errors.Is(err, ErrCrashed) {
		t.Errorf("Info after the plugin went away: %v, want ErrCrashed", err)
	}
}

func TestParsePipeEnv(t *testing.T) {
	for _, tc := range []struct {
		value   string
		in, out int
		wantErr string
	}{
		{value: strings.TrimPrefix(PipeEnv(3, 4), EnvPipe+"="), in: 3, out: 4},
		{value: "3,4", wantErr: "want IN,OUT,VERSION"},
		{value: fmt.Sprintf("3,4,%d", shared.ContractVersion+1), wantErr: "contract version"},
		{value: fmt.Sprintf("1,4,%d", shared.ContractVersion), wantErr: "3 or above"},
		{value: "a,4,1", wantErr: "invalid syntax"},
	} {
		in, out, err := ParsePipeEnv(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePipeEnv(%q) = %v, want an error saying %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || in != tc.in || out != tc.out {
			t.Errorf("ParsePipeEnv(%q) = %d, %d, %v", tc.value, in, out, err)
		}
	}
}

// TestReadFrameLimits: a frame over the limit, or cut short, is an error.
func TestReadFrameLimits(t *testing.T) {
	var buf bytes.Buffer
	w := &frameWriter{w: &buf}
	if err := w.write(kindReply, 9, nil); err != nil {
		t.Fatal(err)
	}
	f, err := readFrame(bufioReader(buf.Bytes()))
	if err != nil || f.kind != kindReply || f.id != 9 || len(f.data) != 0 {
		t.Fatalf("round trip: %+v %v", f, err)
	}
	huge := []byte{kindReply, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}
	if _, err := readFrame(bufioReader(huge)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("oversized frame: %v", err)
	}
	short := []byte{kindReply, 0, 0, 0, 1, 0, 0, 0, 5, 'a'}
	if _, err := readFrame(bufioReader(short)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short frame: %v, want ErrUnexpectedEOF", err)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
