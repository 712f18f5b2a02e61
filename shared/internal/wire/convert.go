package wire

import (
	"time"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

func requestToProto(r Request) *executorv1.ExecuteRequest {
	return &executorv1.ExecuteRequest{
		RunId: r.RunID,
		Argv:  toBytes(r.Argv...),
		Dir:   []byte(r.Dir),
		Env:   toBytes(r.Env...),
		Grant: &executorv1.Grant{
			FsRead:    toBytes(r.Grant.FSRead...),
			FsWrite:   toBytes(r.Grant.FSWrite...),
			Network:   r.Grant.Network,
			TimeoutNs: int64(r.Grant.Timeout),
			Trust:     r.Grant.Trust,
			Protected: toBytes(r.Grant.Protected...),
			Egress:    egressToProto(r.Grant.Egress),
		},
		SkillDir:    []byte(r.SkillDir),
		OutputLimit: r.OutputLimit,
		KillGraceNs: int64(r.KillGrace),
		Limits: &executorv1.Limits{
			OpenFiles: r.Limits.OpenFiles,
			FileSize:  r.Limits.FileSize,
			Processes: r.Limits.Processes,
			Memory:    r.Limits.Memory,
		},
		ExecPaths:  toBytes(r.ExecPaths...),
		BestEffort: r.BestEffort,
		Skill:      skillToProto(r.Skill),
		Command:    commandToProto(r.Command),
		Mounts:     mountsToProto(r.Mounts),
		FileLimit:  r.FileLimit,
		Stage:      []byte(r.Stage),
	}
}

func requestFromProto(p *executorv1.ExecuteRequest) Request {
	g, l := p.GetGrant(), p.GetLimits()
	return Request{
		RunID: p.GetRunId(),
		Argv:  toStrings(p.GetArgv()),
		Dir:   string(p.GetDir()),
		Env:   toStrings(p.GetEnv()),
		Grant: Grant{
			FSRead:    toStrings(g.GetFsRead()),
			FSWrite:   toStrings(g.GetFsWrite()),
			Network:   g.GetNetwork(),
			Timeout:   time.Duration(g.GetTimeoutNs()),
			Trust:     g.GetTrust(),
			Protected: toStrings(g.GetProtected()),
			Egress:    egressFromProto(g.GetEgress()),
		},
		SkillDir:    string(p.GetSkillDir()),
		OutputLimit: p.GetOutputLimit(),
		KillGrace:   time.Duration(p.GetKillGraceNs()),
		Limits: Limits{
			OpenFiles: l.GetOpenFiles(),
			FileSize:  l.GetFileSize(),
			Processes: l.GetProcesses(),
			Memory:    l.GetMemory(),
		},
		ExecPaths:  toStrings(p.GetExecPaths()),
		BestEffort: p.GetBestEffort(),
		Skill:      skillFromProto(p.GetSkill()),
		Command:    commandFromProto(p.GetCommand()),
		Mounts:     mountsFromProto(p.GetMounts()),
		FileLimit:  p.GetFileLimit(),
		Stage:      string(p.GetStage()),
	}
}

func resultToProto(r Result) *executorv1.Result {
	out := &executorv1.Result{
		ExitCode:       int32(r.ExitCode),
		Signal:         r.Signal,
		TimedOut:       r.TimedOut,
		Truncated:      r.Truncated,
		DurationNs:     int64(r.Duration),
		NotEnforced:    r.NotEnforced,
		FilesTruncated: r.FilesTruncated,
		Worker:         r.Worker,
	}
	for _, v := range r.Violations {
		out.Violations = append(out.Violations, &executorv1.Violation{Kind: v.Kind, Target: []byte(v.Target), Detail: []byte(v.Detail),
			Host: v.Host, Port: int32(v.Port), Reason: v.Reason})
	}
	return out
}

func resultFromProto(p *executorv1.Result) Result {
	r := Result{
		ExitCode:       int(p.GetExitCode()),
		Signal:         p.GetSignal(),
		TimedOut:       p.GetTimedOut(),
		Truncated:      p.GetTruncated(),
		Duration:       time.Duration(p.GetDurationNs()),
		NotEnforced:    p.GetNotEnforced(),
		FilesTruncated: p.GetFilesTruncated(),
		Worker:         p.GetWorker(),
	}
	for _, v := range p.GetViolations() {
		r.Violations = append(r.Violations, Violation{Kind: v.GetKind(), Target: string(v.GetTarget()), Detail: string(v.GetDetail()),
			Host: v.GetHost(), Port: int(v.GetPort()), Reason: v.GetReason()})
	}
	return r
}

func infoToProto(i Info) *executorv1.InfoResponse {
	versions := make([]int32, len(i.ContractVersions))
	for k, v := range i.ContractVersions {
		versions[k] = int32(v)
	}
	e := i.Enforces
	return &executorv1.InfoResponse{
		Name: i.Name, Version: i.Version, ContractVersions: versions, Platform: i.Platform,
		Enforces: &executorv1.Enforcement{
			FsRead: e.FSRead, FsWrite: e.FSWrite, Network: e.Network, Timeout: e.Timeout,
			ResourceLimits: e.ResourceLimits, ProcessIsolation: e.ProcessIsolation, Egress: e.Egress,
			StagedWrites: e.StagedWrites,
		},
		Remote:    i.Remote,
		Isolation: isolationToProto(i.Isolation),
	}
}

// isolationToProto and isolationFromProto carry Info.Isolation; a
// declaration this side does not know (a newer peer's) reads as shared,
// which only makes the escape suite stricter.
func isolationToProto(i shared.Isolation) *executorv1.Isolation {
	ns := func(n shared.Namespace) executorv1.Isolation_Namespace { return executorv1.Isolation_Namespace(n) }
	return &executorv1.Isolation{Network: ns(i.Network), Ipc: ns(i.IPC), Pid: ns(i.PID), Mount: ns(i.Mount), User: ns(i.User)}
}

func isolationFromProto(p *executorv1.Isolation) shared.Isolation {
	ns := func(n executorv1.Isolation_Namespace) shared.Namespace {
		switch n {
		case executorv1.Isolation_NAMESPACE_PRIVATE:
			return shared.Private
		case executorv1.Isolation_NAMESPACE_PRIVATE_UNLESS_NETWORK:
			return shared.PrivateUnlessNetwork
		}
		return shared.Shared
	}
	return shared.Isolation{Network: ns(p.GetNetwork()), IPC: ns(p.GetIpc()), PID: ns(p.GetPid()), Mount: ns(p.GetMount()), User: ns(p.GetUser())}
}

func infoFromProto(p *executorv1.InfoResponse) Info {
	versions := make([]int, len(p.GetContractVersions()))
	for k, v := range p.GetContractVersions() {
		versions[k] = int(v)
	}
	e := p.GetEnforces()
	return Info{
		Name: p.GetName(), Version: p.GetVersion(), ContractVersions: versions, Platform: p.GetPlatform(),
		Enforces: Enforcement{
			FSRead: e.GetFsRead(), FSWrite: e.GetFsWrite(), Network: e.GetNetwork(), Timeout: e.GetTimeout(),
			ResourceLimits: e.GetResourceLimits(), ProcessIsolation: e.GetProcessIsolation(), Egress: e.GetEgress(),
			StagedWrites: e.GetStagedWrites(),
		},
		Remote:    p.GetRemote(),
		Isolation: isolationFromProto(p.GetIsolation()),
	}
}

func probeToProto(p Probe) *executorv1.ProbeResponse {
	return &executorv1.ProbeResponse{Status: executorv1.ProbeResponse_Status(p.Status), Reason: p.Reason, Details: p.Details, BestEffort: p.BestEffort}
}

func probeFromProto(p *executorv1.ProbeResponse) Probe {
	return Probe{Status: ProbeStatus(p.GetStatus()), Reason: p.GetReason(), Details: p.GetDetails(), BestEffort: p.GetBestEffort()}
}

// toBytes and toStrings carry argv, environment and paths as bytes on the
// wire: a Go string holds any bytes, a protobuf string only UTF-8.
func toBytes(ss ...string) [][]byte {
	if ss == nil {
		return nil
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func toStrings(bs [][]byte) []string {
	if bs == nil {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// The remote fields stay nil on the wire when empty, so a local backend's
// requests are as small as before.
func skillToProto(s shared.Skill) *executorv1.Skill {
	if s == (shared.Skill{}) {
		return nil
	}
	return &executorv1.Skill{Name: s.Name, Digest: s.Digest, Size: s.Size}
}

func skillFromProto(p *executorv1.Skill) shared.Skill {
	return shared.Skill{Name: p.GetName(), Digest: p.GetDigest(), Size: p.GetSize()}
}

func commandToProto(c shared.Command) *executorv1.Command {
	if c.Interpreter == "" && c.Script == "" && len(c.Args) == 0 {
		return nil
	}
	return &executorv1.Command{Interpreter: c.Interpreter, Script: []byte(c.Script), Args: toBytes(c.Args...)}
}

func commandFromProto(p *executorv1.Command) shared.Command {
	return shared.Command{Interpreter: p.GetInterpreter(), Script: string(p.GetScript()), Args: toStrings(p.GetArgs())}
}

func mountsToProto(ms []shared.Mount) []*executorv1.Mount {
	var out []*executorv1.Mount
	for _, m := range ms {
		out = append(out, &executorv1.Mount{Role: m.Role, Logical: []byte(m.Logical), HostPath: []byte(m.HostPath), Writable: m.Writable})
	}
	return out
}

func mountsFromProto(ps []*executorv1.Mount) []shared.Mount {
	var out []shared.Mount
	for _, p := range ps {
		out = append(out, shared.Mount{Role: p.GetRole(), Logical: string(p.GetLogical()), HostPath: string(p.GetHostPath()), Writable: p.GetWritable()})
	}
	return out
}

func egressToProto(e *shared.Egress) *executorv1.Egress {
	if e == nil {
		return nil
	}
	out := &executorv1.Egress{Allow: e.Allow, Deny: e.Deny, Reasons: e.Reasons, DenyAddresses: e.DenyAddresses,
		Declared: e.Declared, Ceiling: e.Ceiling}
	for _, c := range e.Credentials {
		out.Credentials = append(out.Credentials, &executorv1.Credential{Host: c.Host, Header: c.Header, Prefix: c.Prefix,
			Value: c.Value, Placeholder: c.Placeholder, PlaceholderEnv: c.PlaceholderEnv})
	}
	return out
}

func egressFromProto(p *executorv1.Egress) *shared.Egress {
	if p == nil {
		return nil
	}
	out := &shared.Egress{Allow: p.GetAllow(), Deny: p.GetDeny(), Reasons: p.GetReasons(), DenyAddresses: p.GetDenyAddresses(),
		Declared: p.GetDeclared(), Ceiling: p.GetCeiling()}
	for _, c := range p.GetCredentials() {
		out.Credentials = append(out.Credentials, shared.Credential{Host: c.GetHost(), Header: c.GetHeader(), Prefix: c.GetPrefix(),
			Value: c.GetValue(), Placeholder: c.GetPlaceholder(), PlaceholderEnv: c.GetPlaceholderEnv()})
	}
	return out
}
