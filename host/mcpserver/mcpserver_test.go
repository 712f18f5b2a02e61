package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/host/catalog"
	"github.com/skillhost/skillhost/host/match"
	"github.com/skillhost/skillhost/host/skill"
)

// The offered script tools carry skill.NameTools' names (so '.' is
// replaced, as LLM APIs require) and skill.Tool.Parameters as their input
// schema, the same description of the arguments that host.Functions gives.
func TestScriptTools(t *testing.T) {
	h := openHost(t)
	dir := filepath.Join(h.Catalog().Roots()[0], "my.notes")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: my.notes\ndescription: Dotted\n---\nx\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "add.sh"), []byte("#!/bin/sh\necho dotted\n"), 0o755)
	h.Catalog().Reload()
	ctx := context.Background()
	cs := connect(t, New(h, Options{}))
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(skill.Tool{}.Parameters())
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Name == SearchTool || tool.Name == ActivateTool {
			continue
		}
		if got, _ := json.Marshal(tool.InputSchema); string(got) != string(want) {
			t.Errorf("%s: input schema %s\nwant %s", tool.Name, got, want)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"my_notes__add", "notes__add", "skill_activate", "skills_search"}) {
		t.Errorf("tools %v", names)
	}
}

// connect returns a client session with s over in-memory transports.
func connect(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.mcp.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// skill_activate gives the catalog's instructions and lists exactly the
// resources the server offers: SKILL.md first, none for a skill whose
// files cannot be offered.
func TestActivate(t *testing.T) {
	h := openHost(t)
	root := h.Catalog().Roots()[0]
	os.MkdirAll(filepath.Join(root, "notes", "references"), 0o755)
	os.WriteFile(filepath.Join(root, "notes", "references", "b.md"), []byte("b"), 0o644)
	os.MkdirAll(filepath.Join(root, "notes", "assets"), 0o755)
	os.WriteFile(filepath.Join(root, "notes", "assets", "a.txt"), []byte("a"), 0o644)
	odd := filepath.Join(root, "odd")
	os.MkdirAll(filepath.Join(odd, "references"), 0o755)
	os.WriteFile(filepath.Join(odd, "SKILL.md"), []byte("---\nname: \"a:b\"\ndescription: odd\n---\nodd\n"), 0o644)
	os.WriteFile(filepath.Join(odd, "references", "r.md"), []byte("r"), 0o644)
	h.Catalog().Reload()
	cs := connect(t, New(h, Options{}))
	activate := func(name string) Activation {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ActivateTool, Arguments: map[string]any{"name": name}})
		if err != nil || res.IsError {
			t.Fatalf("activate %s: %v %+v", name, err, res)
		}
		var a Activation
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := activate("notes")
	// Every text file of the skill is a resource, scripts included
	// (issue 29, point 2): whatever activation lists can be read.
	wantRes := []string{"skill://notes/SKILL.md", "skill://notes/assets/a.txt", "skill://notes/references/b.md", "skill://notes/scripts/add.sh"}
	if a.Instructions != "Write notes." || !slices.Equal(a.Resources, wantRes) ||
		len(a.Tools) != 1 || a.Tools[0].Name != "notes__add" || !slices.Contains(a.Files, "scripts/add.sh") {
		t.Errorf("activation %+v", a)
	}
	if a := activate("a:b"); len(a.Resources) != 0 || len(a.Tools) != 0 || a.Instructions == "" {
		t.Errorf("odd activation %+v", a)
	}
}

func TestCheckListenAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		token  string
		ok     bool
	}{
		{"127.0.0.1:8765", false, "", true},
		{"127.0.0.2:0", false, "", true},
		{"[::1]:8765", false, "", true},
		{"localhost:8765", false, "", true},
		{"LocalHost:1", false, "", true},
		{":8765", false, "", false},
		{"0.0.0.0:8765", false, "", false},
		{"[::]:8765", false, "", false},
		{"192.168.1.5:8765", false, "", false},
		{"example.com:80", false, "", false},
		{"localhost.evil.com:80", false, "", false},
		{"0.0.0.0:8765", true, "", false},
		{"0.0.0.0:8765", true, "s3cret", true},
		{"127.0.0.1", false, "", false},
	}
	for _, tt := range tests {
		err := CheckListenAddr(tt.addr, tt.remote, tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListenAddr(%q, %v, %q) = %v", tt.addr, tt.remote, tt.token, err)
		}
	}
}

func TestMIMEType(t *testing.T) {
	for file, want := range map[string]string{
		"SKILL.md": "text/markdown", "a/b.JSON": "application/json", "x.png": "image/png",
		"Makefile": "text/plain", "blob.bin123": "application/octet-stream", "s.yml": "application/yaml",
	} {
		if got := mimeType(file); got != want {
			t.Errorf("mimeType(%q) = %q, want %q", file, got, want)
		}
	}
}

// catalogHost is a Host with a catalog and nothing to run: these tests
// look at what is offered, not at runs (cmd/skillhost's MCP tests run
// tools through the real host and plugins).
type catalogHost struct{ cat *catalog.Catalog }

func (c catalogHost) Catalog() *catalog.Catalog { return c.cat }

func (catalogHost) RunTool(context.Context, ToolCall, func(string) error) (*ToolResult, error) {
	return nil, errors.New("catalogHost runs nothing")
}

func (catalogHost) ApplyKept(string) (string, error) { return "", errors.New("no kept changes") }

func (catalogHost) Search(context.Context, string, int) ([]match.Match, float64, error) {
	return nil, 0, nil
}

// openHost returns a host over one skill.
func openHost(t *testing.T) catalogHost {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "notes")
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: notes\ndescription: Take notes\n---\nWrite notes.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "add.sh"), []byte("#!/bin/sh\necho added\n"), 0o755)
	return catalogHost{catalog.New([]string{root})}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func TestHTTPBearerToken(t *testing.T) {
	s := New(openHost(t), Options{})
	ts := httptest.NewServer(s.Handler("s3cret", HTTPLimits{}))
	defer ts.Close()
	ctx := context.Background()
	connect := func(token string) (*mcp.ClientSession, error) {
		hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	}
	if cs, err := connect("wrong"); err == nil {
		cs.Close()
		t.Fatal("a wrong token was accepted")
	}
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d", resp.StatusCode)
	}
	cs, err := connect("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"notes__add", "skill_activate", "skills_search"}) {
		t.Errorf("tools over HTTP: %v", names)
	}
}

func TestResourceURI(t *testing.T) {
	tests := []struct {
		skill, rel, want string
		valid            bool
	}{
		{"pdf", "SKILL.md", "skill://pdf/SKILL.md", true},
		{"pdf", "references/deep/a b.md", "skill://pdf/references/deep/a%20b.md", true},
		{"données", "é?#.txt", "skill://donn%C3%A9es/%C3%A9%3F%23.txt", true},
		// Go's URL parser refuses escaped ASCII in a host, so Sync skips
		// such a skill's resources (with a warning) rather than panicking.
		{"a:b", "x", "skill://a%3Ab/x", false},
	}
	for _, tt := range tests {
		got := resourceURI(tt.skill, tt.rel)
		if got != tt.want {
			t.Errorf("resourceURI(%q, %q) = %q, want %q", tt.skill, tt.rel, got, tt.want)
		}
		if _, err := url.Parse(got); (err == nil) != tt.valid {
			t.Errorf("%q parses: %v", got, err)
		}
	}
}

// A skill whose name cannot be a URI host still gets its tools, and does
// not bring the server down.
func TestOddSkillName(t *testing.T) {
	h := openHost(t)
	root := h.Catalog().Roots()[0]
	dir := filepath.Join(root, "odd")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: \"a:b\"\ndescription: odd\n---\nodd\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "x.sh"), []byte("#!/bin/sh\necho x\n"), 0o755)
	h.Catalog().Reload()
	s := New(h, Options{})
	if names := s.ToolNames(); !slices.Contains(names, "a_b__x") {
		t.Errorf("tools %v", names)
	}
	if _, ok := s.resources["skill://notes/SKILL.md"]; !ok {
		t.Error("the other skill's resources are missing")
	}
}

// A flood of initialize requests (issue 26, attack 9) cannot grow the
// server: without the token each is refused before a session exists, and
// with it the open sessions stop at the cap. A page of another origin is
// refused even with the token, and a body over the bound is cut.
func TestHTTPFloodAndOrigin(t *testing.T) {
	s := New(openHost(t), Options{})
	ts := httptest.NewServer(s.Handler("s3cret", HTTPLimits{MaxSessions: 8, SessionTimeout: time.Minute, MaxBody: 1 << 16}))
	defer ts.Close()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	post := func(token, origin, body string) int {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 1500 {
		if code := post("", "", initialize); code != http.StatusUnauthorized {
			t.Fatalf("unauthenticated initialize %d: status %d", i, code)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("1500 unauthenticated initializes: heap %d KiB before, %d KiB after", before.HeapAlloc>>10, after.HeapAlloc>>10)
	if n := s.sessions(); n != 0 {
		t.Errorf("%d sessions after the unauthenticated flood", n)
	}
	ok, refused := 0, 0
	for range 40 {
		switch code := post("s3cret", "", initialize); code {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("authenticated initialize: status %d", code)
		}
	}
	if ok != 8 || refused != 32 || s.sessions() != 8 {
		t.Errorf("40 initializes with the token: %d opened, %d refused, %d open; want 8, 32, 8", ok, refused, s.sessions())
	}
	if code := post("s3cret", "http://evil.example", initialize); code != http.StatusForbidden {
		t.Errorf("another origin: status %d, want 403", code)
	}
	if code := post("s3cret", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", 1<<17)+`"}}`); code < 400 {
		t.Errorf("a body over the bound: status %d", code)
	}
}

// An idle session is closed after the timeout, freeing its place.
func TestHTTPIdleSessionsExpire(t *testing.T) {
	s := New(openHost(t), Options{})
	ts := httptest.NewServer(s.Handler("s3cret", HTTPLimits{MaxSessions: 4, SessionTimeout: 200 * time.Millisecond, MaxBody: 1 << 16}))
	defer ts.Close()
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(30 * time.Second)
	for s.sessions() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session was never closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A skill's text files beside SKILL.md are resources (the pdf skill says
// "read FORMS.md"); binaries outside references/ and assets/, hidden files,
// caches and names that look like secrets are not.
func TestSkillFilesAreResources(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pdf")
	files := map[string]string{
		"SKILL.md": "---\nname: pdf\ndescription: PDFs\n---\nRead forms.md.\n", "forms.md": "# Forms\n", "reference.md": "# Ref\n",
		"scripts/check.py": "print(1)\n", "lib.so": "\x7fELF\x00\x00", "assets/font.ttf": "\x00\x01\x00\x00",
		".env": "TOKEN=x\n", "server.key": "-----BEGIN\n", "__pycache__/x.pyc": "x\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := skill.Parse(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range skillFiles(s) {
		got = append(got, f.rel)
	}
	slices.Sort(got)
	want := []string{"SKILL.md", "assets/font.ttf", "forms.md", "reference.md", "scripts/check.py"}
	if !slices.Equal(got, want) {
		t.Errorf("resources %q, want %q", got, want)
	}
}
