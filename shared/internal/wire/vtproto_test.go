package wire

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// pipeMessages are the messages the fast path decodes, each made fresh.
var pipeMessages = []func() proto.Message{
	func() proto.Message { return &executorv1.ExecuteRequest{} },
	func() proto.Message { return &executorv1.ExecuteResponse{} },
	func() proto.Message { return &executorv1.InfoResponse{} },
	func() proto.Message { return &executorv1.ProbeResponse{} },
	func() proto.Message { return &executorv1.SetConfigRequest{} },
	func() proto.Message { return &executorv1.SetConfigResponse{} },
	func() proto.Message { return &executorv1.ExplainResponse{} },
}

// seedMessages are full messages of the kinds the fast path carries.
func seedMessages() []proto.Message {
	req := requestToProto(Request{RunID: "r1", Argv: []string{"/bin/sh", "-c", "echo \xff"}, Dir: "/w", SkillDir: "/s",
		Env: []string{"A=1"}, OutputLimit: 1 << 20, Stage: "/stage",
		Grant: shared.Grant{FSRead: []string{"/r"}, FSWrite: []string{"/w"}, Network: true, Timeout: 3 * time.Second,
			Egress: &shared.Egress{Allow: []string{"example.com"}, Reasons: map[string]string{"example.com": "docs"}}},
		Limits: shared.Limits{Processes: 64, Memory: 1 << 30}})
	res := &executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Result{Result: resultToProto(Result{ExitCode: 3,
		Violations: []shared.Violation{{Kind: "network", Target: "evil.example", Host: "evil.example", Reason: "not allowed"}}})}}
	out := &executorv1.ExecuteResponse{Event: &executorv1.ExecuteResponse_Output{Output: []byte("hi\n")}}
	info := infoToProto(Info{Name: "fake", Version: "1", ContractVersions: []int{1}, Enforces: shared.Enforcement{FSRead: true, Egress: true}})
	probe := probeToProto(Probe{Status: shared.Healthy, Reason: "ok", Details: map[string]string{"k": "v"}})
	return []proto.Message{req, res, out, info, probe, &executorv1.SetConfigRequest{Config: []byte(`{"a":1}`)}}
}

// The generated decoding the fast path uses never panics, whatever it is
// given; and what proto.Marshal writes of any message it reads back as
// that message, as its own encoding does under proto.Unmarshal. (It is
// stricter with a field of the wrong wire type, which proto.Unmarshal
// keeps as unknown, and laxer with a string field of invalid UTF-8, which
// proto.Marshal refuses to write: neither comes from a peer of the
// contract.)
func FuzzUnmarshalVT(f *testing.F) {
	for _, m := range seedMessages() {
		data, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fresh := range pipeMessages {
			_ = unmarshal(data, fresh())
			// What a peer of the contract could have sent: the message
			// proto.Unmarshal reads, without fields it does not know.
			std := fresh()
			if (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, std) != nil {
				continue
			}
			valid, err := proto.Marshal(std)
			if err != nil {
				continue
			}
			vt := fresh()
			if err := unmarshal(valid, vt); err != nil {
				t.Fatalf("%T: proto.Unmarshal reads %x, the generated code does not: %v", std, valid, err)
			}
			if !proto.Equal(vt, std) {
				t.Fatalf("%T: %x decodes to %v, proto.Unmarshal to %v", std, valid, vt, std)
			}
			again, err := marshal(vt)
			if err != nil {
				t.Fatalf("%T: re-encode: %v", vt, err)
			}
			back := fresh()
			if err := proto.Unmarshal(again, back); err != nil || !proto.Equal(back, std) {
				t.Fatalf("%T: the generated encoding of %v reads back as %v (%v)", vt, std, back, err)
			}
		}
	})
}

// The fast path marshals every message it sends through generated code,
// and the result is what proto.Marshal's reads back to.
func TestPipeMessagesUseGeneratedCode(t *testing.T) {
	for _, fresh := range pipeMessages {
		if m, ok := fresh().(vtMessage); !ok {
			t.Errorf("%T has no generated marshalling: run make generate", m)
		}
	}
	for _, m := range seedMessages() {
		data, err := marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back := proto.Clone(m)
		proto.Reset(back)
		if err := proto.Unmarshal(data, back); err != nil || !proto.Equal(back, m) {
			t.Errorf("%T: generated encoding reads back as %v (%v), want %v", m, back, err, m)
		}
	}
}
