package shared_test

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/shared"
	"github.com/skillhost/skillhost/shared/backend"
	"github.com/skillhost/skillhost/shared/conformance"
)

// fake echoes its request back as output and result, emitting in one
// oversized chunk to check that the transport splits it.
type fake struct{ last shared.Request }

func (f *fake) Info(context.Context) (shared.Info, error) {
	return shared.Info{Name: "fake", Version: "1.2.3", ContractVersions: []int{1}, Platform: "test/test",
		Enforces: shared.Enforcement{FSRead: true, Timeout: true, ResourceLimits: true, Egress: true}, Remote: true,
		Isolation: shared.Isolation{Network: shared.PrivateUnlessNetwork, PID: shared.Private, Mount: shared.Private}}, nil
}

func (f *fake) Probe(context.Context) (shared.Probe, error) {
	return shared.Probe{Status: shared.Unhealthy, Reason: "because", Details: map[string]string{"k": "v"}, BestEffort: true}, nil
}

// configurable is fake with settings and an explanation.
type configurable struct {
	fake
	doc []byte
}

func (c *configurable) SetConfig(_ context.Context, doc []byte) ([]shared.ConfigProblem, error) {
	c.doc = doc
	var s struct {
		Level int `json:"level"`
	}
	return backend.DecodeConfig(doc, &s), nil
}

func (c *configurable) Explain(_ context.Context, req shared.Request) (shared.Explanation, error) {
	return shared.Explanation{Format: "text", Text: "t", Argv: req.Argv, Readable: []string{"/usr", "/opt/\xff"}}, nil
}

// TestSettingsAndExplanationThroughGRPC checks SetConfig and Explain end
// to end, and that a backend without settings answers ErrNotConfigurable.
func TestSettingsAndExplanationThroughGRPC(t *testing.T) {
	ctx := context.Background()
	if _, err := conformance.InProcess(t, &fake{}).(shared.Configurable).SetConfig(ctx, []byte("{}")); !errors.Is(err, shared.ErrNotConfigurable) {
		t.Errorf("SetConfig of a backend without settings: %v", err)
	}
	impl := &configurable{}
	ex := conformance.InProcess(t, impl)
	problems, err := ex.(shared.Configurable).SetConfig(ctx, []byte(`{"level": 2}`))
	if err != nil || problems != nil || string(impl.doc) != `{"level": 2}` {
		t.Errorf("SetConfig = %v, %v; the plugin got %q", problems, err, impl.doc)
	}
	problems, err = ex.(shared.Configurable).SetConfig(ctx, []byte(`{"level": "high", "x": 1}`))
	want := []shared.ConfigProblem{{Key: "level", Message: "a string is not allowed here; want a number"}}
	if err != nil || !reflect.DeepEqual(problems, want) {
		t.Errorf("SetConfig of bad settings = %+v, %v; want %+v", problems, err, want)
	}
	e, err := ex.(shared.Explainer).Explain(ctx, shared.Request{Argv: []string{"/bin/x"}})
	if want, _ := impl.Explain(ctx, shared.Request{Argv: []string{"/bin/x"}}); err != nil || !reflect.DeepEqual(e, want) {
		t.Errorf("Explain = %+v, %v; want %+v", e, err, want)
	}
}

func (f *fake) Execute(_ context.Context, req shared.Request, emit func([]byte) error) (shared.Result, error) {
	f.last = req
	if len(req.Argv) > 0 && req.Argv[0] == "refuse" {
		return shared.Result{}, errors.New("refused on purpose")
	}
	if err := emit(bytes.Repeat([]byte("x"), 300<<10)); err != nil {
		return shared.Result{}, err
	}
	return shared.Result{ExitCode: -1, Signal: "SIGKILL", TimedOut: true, Truncated: true, Duration: 1500 * time.Millisecond,
		Violations:  []shared.Violation{{Kind: "fs", Target: "/etc/shadow", Detail: "d"}},
		NotEnforced: []string{"network"}}, nil
}

func TestRoundTripThroughGRPC(t *testing.T) {
	impl := &fake{}
	ex := conformance.InProcess(t, impl)
	ctx := context.Background()
	info, err := ex.Info(ctx)
	if want, _ := impl.Info(ctx); err != nil || !reflect.DeepEqual(info, want) {
		t.Errorf("Info = %+v, %v", info, err)
	}
	probe, err := ex.Probe(ctx)
	if want, _ := impl.Probe(ctx); err != nil || !reflect.DeepEqual(probe, want) {
		t.Errorf("Probe = %+v, %v", probe, err)
	}
	req := shared.Request{
		RunID: "r", Argv: []string{"/bin/x", "a b"}, Dir: "/d", Env: []string{"A=1"},
		Grant: shared.Grant{FSRead: []string{"/r"}, FSWrite: []string{"/w"}, Network: true, Timeout: 2 * time.Second, Trust: "external",
			Egress: &shared.Egress{Allow: []string{"api.example.com", "*.github.com:443"}, Deny: []string{"gist.github.com"},
				Reasons: map[string]string{"gist.github.com": "no gists"}, DenyAddresses: []string{"10.0.0.0/8"},
				Declared: []string{"*.github.com"}, Ceiling: []string{"*.github.com:443"},
				Credentials: []shared.Credential{{Host: "api.example.com", Header: "Authorization", Prefix: "Bearer ", Value: "s3cret",
					Placeholder: "ph", PlaceholderEnv: "KEY"}}}},
		SkillDir: "/s", OutputLimit: 99, KillGrace: time.Second,
		Limits:    shared.Limits{OpenFiles: 1, FileSize: 2, Processes: 3, Memory: 4},
		ExecPaths: []string{"/opt/py"}, BestEffort: true,
		Skill:   shared.Skill{Name: "s", Digest: "sha256:" + strings.Repeat("ab", 32), Size: 10240},
		Command: shared.Command{Interpreter: "python3", Script: "scripts/x.py", Args: []string{"a b", "\xff"}},
		Mounts: []shared.Mount{{Role: shared.MountSkill, Logical: "/skill", HostPath: "/s"},
			{Role: shared.MountPath, Logical: "/w", HostPath: "/w", Writable: true}},
	}
	var chunks []int
	res, err := ex.Execute(ctx, req, func(b []byte) error { chunks = append(chunks, len(b)); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(impl.last, req) {
		t.Errorf("the request changed on the way:\n%+v\n%+v", impl.last, req)
	}
	if want, _ := impl.Execute(ctx, req, func([]byte) error { return nil }); !reflect.DeepEqual(res, want) {
		t.Errorf("Result = %+v, want %+v", res, want)
	}
	total := 0
	for _, n := range chunks {
		if n > shared.MaxChunk {
			t.Errorf("a chunk of %d bytes exceeds %d", n, shared.MaxChunk)
		}
		total += n
	}
	if total != 300<<10 || len(chunks) < 5 {
		t.Errorf("got %d bytes in %d chunks", total, len(chunks))
	}
	if _, err := ex.Execute(ctx, shared.Request{Argv: []string{"refuse"}}, func([]byte) error { return nil }); err == nil || err.Error() != "refused on purpose" {
		t.Errorf("a refusal must come back as the backend's message: %v", err)
	}
	if _, err := ex.(shared.Explainer).Explain(ctx, req); !errors.Is(err, shared.ErrNotExplainable) {
		t.Errorf("Explain of a backend without it: %v", err)
	}
}
