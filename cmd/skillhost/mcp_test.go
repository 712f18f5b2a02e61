package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/internal/testskill"
	"github.com/skillhost/skillhost/shared/procstat"
)

// mcpClient is a Go SDK client connected over stdio to a real `skillhost
// mcp` process.
type mcpClient struct {
	*mcp.ClientSession
	mu           sync.Mutex
	progress     map[any][]string // progress token -> messages
	onProgress   func(token any, msg string)
	toolsChanged chan struct{}
	stderr       *bytes.Buffer
}

func startMCP(t testing.TB, skills string, extra ...string) *mcpClient {
	t.Helper()
	bin, pluginDir := skillhostBinary(t)
	c := &mcpClient{progress: map[any][]string{}, toolsChanged: make(chan struct{}, 16), stderr: &bytes.Buffer{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress[req.Params.ProgressToken] = append(c.progress[req.Params.ProgressToken], req.Params.Message)
			f := c.onProgress
			c.mu.Unlock()
			if f != nil {
				f(req.Params.ProgressToken, req.Params.Message)
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.toolsChanged <- struct{}{}:
			default:
			}
		},
	})
	cmd := exec.Command(bin, append([]string{"--skills", skills, "mcp", "--strategy", "null", "--poll", "100ms", "--tools", "all"}, extra...)...)
	cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+pluginDir, "SKILLHOST_SANDBOX__ENABLED=true")
	cmd.Stderr = c.stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, c.stderr)
	}
	c.ClientSession = session
	t.Cleanup(func() { session.Close() })
	return c
}

func (c *mcpClient) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v\n%s", name, err, c.stderr)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// mcpSkills writes the fixture skills and a file outside them that
// symlinks point to; it returns the skills root and that outside directory.
func mcpSkills(t testing.TB) (string, string) {
	t.Helper()
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	kit := testskill.Add(t, root, "kit", testskill.Skill{Name: "kit", Description: "test skill kit", FrontMatter: "timeout: 60\n", Body: "# kit\n", Scripts: map[string]string{
		"echo.sh":   "#!/bin/sh\n# Print each argument in brackets\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done; echo\n",
		"fail.sh":   "#!/bin/sh\necho partial\nexit 3\n",
		"crash.sh":  "#!/bin/sh\nkill -SEGV $$\n",
		"work.sh":   "#!/bin/sh\nsleep 1\necho \"done $1\"\n",
		"stream.sh": "#!/bin/sh\necho first\ni=0\nwhile [ ! -e \"$1\" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\nif [ -e \"$1\" ]; then echo second after gate; else echo second without gate; fi\n",
		"tree.sh":   "#!/bin/sh\nsleep 300 &\necho $! > \"$1/child.pid\"\necho $$ > \"$1/parent.pid\"\necho ready\nwait\n",
	}})
	// Rewrite SKILL.md with a description the matcher can find.
	md := "---\nname: kit\ndescription: Echo arguments in brackets and fail on purpose, a kit of test tools.\n---\n# Kit\nUse echo to echo arguments.\n"
	must(t, os.WriteFile(filepath.Join(kit, "SKILL.md"), []byte(md), 0o644))
	must(t, os.MkdirAll(filepath.Join(kit, "references", "deep"), 0o755))
	must(t, os.MkdirAll(filepath.Join(kit, "assets"), 0o755))
	must(t, os.WriteFile(filepath.Join(kit, "references", "guide.md"), []byte("# Guide\nsteps\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(kit, "references", "deep", "notes.txt"), []byte("deep notes"), 0o644))
	must(t, os.WriteFile(filepath.Join(kit, "references", ".env"), []byte("HIDDEN=1"), 0o644))
	must(t, os.WriteFile(filepath.Join(kit, "assets", "data.json"), []byte(`{"a":1}`), 0o644))
	must(t, os.WriteFile(filepath.Join(kit, "assets", "logo.png"), []byte("\x89PNG\r\n\x1a\n\x00\x01\xff"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(kit, "references", "secret-link.md")))
	must(t, os.Symlink(outside, filepath.Join(kit, "assets", "outside-dir")))
	must(t, os.Symlink("guide.md", filepath.Join(kit, "references", "inside-link.md")))
	testskill.Add(t, root, "sleepy", testskill.Skill{Name: "sleepy", Description: "test skill sleepy", FrontMatter: "timeout: 1\n", Body: "# sleepy\n", Scripts: map[string]string{"nap.sh": "#!/bin/sh\necho started\nexec sleep 30\n"}})
	return root, outside
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMCPTools(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	ctx := context.Background()
	list, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var echo *mcp.Tool
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.Name == "kit__echo" {
			echo = tool
		}
	}
	want := []string{"kit__crash", "kit__echo", "kit__fail", "kit__stream", "kit__tree", "kit__work", "skill_activate", "skills_search", "sleepy__nap"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v\nwant  %v", names, want)
	}
	// The tool's own words and its skill's name; not the skill's whole
	// description once per tool (issue 29, point 5).
	if strings.Contains(echo.Description, "Echo arguments in brackets") || !strings.Contains(echo.Description, "Print each argument in brackets") ||
		!strings.Contains(echo.Description, "skill kit") {
		t.Errorf("kit__echo description %q: want the tool's own and the skill's name", echo.Description)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if !strings.Contains(string(schema), `"args"`) || !strings.Contains(string(schema), `"argv"`) {
		t.Errorf("kit__echo schema %s", schema)
	}

	tests := []struct {
		name    string
		tool    string
		args    any
		isError bool
		want    string // regexp on the text
	}{
		{"argv passed exactly", "kit__echo", map[string]any{"argv": []string{"a b", "$HOME", ";"}}, false, `^\[a b\]\[\$HOME\]\[;\]\n$`},
		{"args split like a shell", "kit__echo", map[string]any{"args": `"x y" z`}, false, `^\[x y\]\[z\]\n$`},
		{"no arguments", "kit__echo", nil, false, `^\n$`},
		{"both forms", "kit__echo", map[string]any{"args": "a", "argv": []string{"b"}}, true, `either args or argv`},
		{"unknown argument", "kit__echo", map[string]any{"arg": "a"}, true, `arguments:`},
		{"failure", "kit__fail", nil, true, `^Error \(exit 3\):\npartial\n$`},
		{"crash", "kit__crash", nil, true, `^Error \(signal SIGSEGV\):`},
		{"timeout", "sleepy__nap", nil, true, `(?s)^Error \(timed out\):\nstarted\n.*\[killed: exceeded 1s\]\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.call(t, tt.tool, tt.args)
			if res.IsError != tt.isError || !regexp.MustCompile(tt.want).MatchString(text(res)) {
				t.Errorf("isError %v, text %q; want %v, %s", res.IsError, text(res), tt.isError, tt.want)
			}
		})
	}
	res := c.call(t, "kit__fail", nil)
	structured, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(structured), `"exit_code":3`) || !strings.Contains(string(structured), `"strategy":"null"`) {
		t.Errorf("structured content %s", structured)
	}
}

// Output reaches the client as progress notifications while the script
// runs: the script waits for a gate the test opens only after the first
// notification.
func TestMCPProgress(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	gate := filepath.Join(t.TempDir(), "gate")
	c.onProgress = func(token any, msg string) {
		if token == "tok-stream" && msg == "first\n" {
			os.WriteFile(gate, nil, 0o644)
		}
	}
	params := &mcp.CallToolParams{Name: "kit__stream", Arguments: map[string]any{"argv": []string{gate}}}
	params.SetProgressToken("tok-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || text(res) != "first\nsecond after gate\n" {
		t.Fatalf("result %q (isError %v): the first output did not arrive while the script ran", text(res), res.IsError)
	}
	// The server sends every notification before the result, but the
	// client SDK queues notifications for a handler goroutine while it
	// hands a result over at once, so the last may be handled after the
	// call returns.
	var got []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		got = append([]string(nil), c.progress["tok-stream"]...)
		c.mu.Unlock()
		if strings.Join(got, "") == "first\nsecond after gate\n" || time.Now().After(deadline) {
			break
		}
	}
	if strings.Join(got, "") != "first\nsecond after gate\n" {
		t.Errorf("progress messages %q", got)
	}
}

// Cancelling a call kills the script and everything it started.
func TestMCPCancel(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	callCtx, cancelCall := context.WithCancel(ctx)
	c.onProgress = func(token any, msg string) {
		if token == "tok-tree" && strings.Contains(msg, "ready") {
			cancelCall()
		}
	}
	params := &mcp.CallToolParams{Name: "kit__tree", Arguments: map[string]any{"argv": []string{dir}}}
	params.SetProgressToken("tok-tree")
	_, err := c.CallTool(callCtx, params)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("call ended with %v, want cancellation", err)
	}
	for _, f := range []string{"parent.pid", "child.pid"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		deadline := time.Now().Add(60 * time.Second)
		for procstat.Alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s %d still runs after the call was cancelled", f, pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The server still serves.
	if res := c.call(t, "kit__echo", map[string]any{"args": "after"}); text(res) != "[after]\n" {
		t.Errorf("after cancellation: %q", text(res))
	}
}

func TestMCPConcurrentCalls(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	const n = 20
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	start := time.Now()
	// A crashing and a timing-out script run alongside and block nothing.
	var crash, slow *mcp.CallToolResult
	bounded, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	wg.Add(2)
	go func() {
		defer wg.Done()
		crash, _ = c.CallTool(bounded, &mcp.CallToolParams{Name: "kit__crash"})
	}()
	go func() {
		defer wg.Done()
		slow, _ = c.CallTool(bounded, &mcp.CallToolParams{Name: "sleepy__nap"})
	}()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "kit__work", Arguments: map[string]any{"argv": []string{strconv.Itoa(i)}}})
			if err != nil {
				errs[i] = err
				return
			}
			results[i] = text(res)
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent one-second calls took %v", n, time.Since(start).Round(time.Millisecond))
	for i := range n {
		if errs[i] != nil || results[i] != fmt.Sprintf("done %d\n", i) {
			t.Errorf("call %d: %q, %v", i, results[i], errs[i])
		}
	}
	if crash == nil || !crash.IsError || slow == nil || !slow.IsError {
		t.Errorf("crash %v, slow %v: want both isError", crash, slow)
	}
}

func TestMCPResources(t *testing.T) {
	skills, outside := mcpSkills(t)
	c := startMCP(t, skills)
	ctx := context.Background()
	list, err := c.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range list.Resources {
		got[r.URI] = r.MIMEType
	}
	want := map[string]string{
		"skill://kit/SKILL.md":                  "text/markdown",
		"skill://kit/references/guide.md":       "text/markdown",
		"skill://kit/references/inside-link.md": "text/markdown",
		"skill://kit/references/deep/notes.txt": "text/plain",
		"skill://kit/assets/data.json":          "application/json",
		"skill://kit/assets/logo.png":           "image/png",
		"skill://sleepy/SKILL.md":               "text/markdown",
		// Every text file of a skill is a resource, scripts included.
		"skill://kit/scripts/crash.sh":  "text/x-shellscript",
		"skill://kit/scripts/echo.sh":   "text/x-shellscript",
		"skill://kit/scripts/fail.sh":   "text/x-shellscript",
		"skill://kit/scripts/stream.sh": "text/x-shellscript",
		"skill://kit/scripts/tree.sh":   "text/x-shellscript",
		"skill://kit/scripts/work.sh":   "text/x-shellscript",
		"skill://sleepy/scripts/nap.sh": "text/x-shellscript",
	}
	for uri, mime := range want {
		if got[uri] != mime {
			t.Errorf("resource %s: MIME %q, want %q", uri, got[uri], mime)
		}
	}
	if len(got) != len(want) {
		t.Errorf("resources %v\nwant exactly %v", got, want)
	}

	read := func(uri string) (*mcp.ReadResourceResult, error) {
		return c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	}
	if r, err := read("skill://kit/references/guide.md"); err != nil || r.Contents[0].Text != "# Guide\nsteps\n" {
		t.Errorf("guide.md: %+v, %v", r, err)
	}
	if r, err := read("skill://kit/assets/logo.png"); err != nil || !bytes.Equal(r.Contents[0].Blob, []byte("\x89PNG\r\n\x1a\n\x00\x01\xff")) {
		t.Errorf("logo.png: %+v, %v", r, err)
	}
	for _, uri := range []string{
		"skill://kit/references/secret-link.md", "skill://kit/assets/outside-dir/secret.txt",
		"skill://kit/references/.env", "skill://kit/../../" + filepath.Base(outside) + "/secret.txt", "skill://nosuch/SKILL.md",
	} {
		if r, err := read(uri); err == nil {
			t.Errorf("%s was served: %+v", uri, r.Contents)
		}
	}

	// A symlink swapped in after listing is still refused at read time.
	guide := filepath.Join(skills, "kit", "references", "guide.md")
	must(t, os.Remove(guide))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), guide))
	if r, err := read("skill://kit/references/guide.md"); err == nil {
		t.Errorf("a symlink swapped in was followed out of the skill: %q", r.Contents[0].Text)
	}
}

func TestMCPSearchAndActivate(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	res := c.call(t, "skills_search", map[string]any{"query": "echo my arguments in brackets"})
	var found struct {
		Skills []struct {
			Name  string   `json:"name"`
			Score float64  `json:"score"`
			Tools []string `json:"tools"`
		} `json:"skills"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &found)
	if res.IsError || len(found.Skills) == 0 || found.Skills[0].Name != "kit" || found.Skills[0].Score <= 0 || !slices.Contains(found.Skills[0].Tools, "kit__echo") {
		t.Fatalf("skills_search: %s (isError %v, text %q)", raw, res.IsError, text(res))
	}
	if res := c.call(t, "skills_search", map[string]any{"query": ""}); !res.IsError {
		t.Error("an empty query was accepted")
	}

	res = c.call(t, "skill_activate", map[string]any{"name": "kit"})
	var act struct {
		Instructions string   `json:"instructions"`
		Directory    string   `json:"directory"`
		Files        []string `json:"files"`
		Resources    []string `json:"resources"`
		Tools        []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	raw, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &act)
	if res.IsError || !strings.Contains(act.Instructions, "Use echo") || act.Directory != filepath.Join(skills, "kit") ||
		!slices.Contains(act.Files, "scripts/echo.sh") || slices.Contains(act.Files, "references/.env") || !slices.Contains(act.Resources, "skill://kit/references/guide.md") ||
		len(act.Tools) != 6 || !strings.HasPrefix(text(res), "# Skill kit\n\n# Kit\nUse echo") {
		t.Errorf("skill_activate: %s\ntext %q", raw, text(res))
	}
	if res := c.call(t, "skill_activate", map[string]any{"name": "kitt"}); !res.IsError || !strings.Contains(text(res), `"kit"`) {
		t.Errorf("unknown skill: isError %v, %q", res.IsError, text(res))
	}
}

func TestMCPListChanged(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills)
	ctx := context.Background()
	testskill.Add(t, skills, "fresh", testskill.Skill{Name: "fresh", Description: "test skill fresh", Body: "# fresh\n", Scripts: map[string]string{"hello.sh": "#!/bin/sh\necho fresh hello\n"}})
	waitTools := func(what string, ok func([]string) bool) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for first := true; ; first = false {
			// On a busy machine the watcher's first look may come after
			// the write and before the client's session exists, which then
			// has nothing to be told: what the list holds is checked first.
			if !first {
				select {
				case <-c.toolsChanged:
				case <-deadline:
					t.Fatalf("no tools/list_changed for %s", what)
				}
			}
			list, err := c.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			if ok(names) {
				return
			}
		}
	}
	waitTools("an added skill", func(n []string) bool { return slices.Contains(n, "fresh__hello") })
	if res := c.call(t, "fresh__hello", nil); text(res) != "fresh hello\n" {
		t.Errorf("new tool: %q", text(res))
	}
	must(t, os.RemoveAll(filepath.Join(skills, "fresh")))
	waitTools("a removed skill", func(n []string) bool { return !slices.Contains(n, "fresh__hello") })
	if res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://fresh/SKILL.md"}); err == nil {
		t.Errorf("a removed skill's file is still served: %+v", res)
	}
}

func TestMCPDisclosureOnly(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills, "--disclosure-only")
	list, err := c.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"skill_activate", "skills_search"}) {
		t.Errorf("tools %v", names)
	}
}

// BenchmarkMCPCall measures one tools/call of a trivial script over stdio,
// through the null plugin: the MCP server's overhead on top of a run.
func BenchmarkMCPCall(b *testing.B) {
	skills, _ := mcpSkills(b)
	c := startMCP(b, skills)
	ctx := context.Background()
	args := map[string]any{"args": "x"}
	for b.Loop() {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "kit__echo", Arguments: args})
		if err != nil || text(res) != "[x]\n" {
			b.Fatalf("%v %v", res, err)
		}
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// skillhost mcp --http serves streamable HTTP on loopback, behind the
// token when one is set.
func TestMCPHTTP(t *testing.T) {
	url, _ := startMCPHTTP(t, "SKILLHOST_MCP_TOKEN=t0ken")

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: status %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "skillhost-test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{"t0ken"}}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "kit__echo", Arguments: map[string]any{"argv": []string{"over http"}}})
	if err != nil || text(res) != "[over http]\n" {
		t.Fatalf("call over HTTP: %v %v", res, err)
	}
}

// Without $SKILLHOST_MCP_TOKEN, skillhost mcp --http makes a token up and
// prints it: loopback is not a reason to serve every local user.
func TestMCPHTTPGeneratesAToken(t *testing.T) {
	url, token := startMCPHTTP(t)
	if len(token) < 32 {
		t.Fatalf("token %q: want one printed", token)
	}
	status := func(tok string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := status(""); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d", code)
	}
	if code := status(token); code == http.StatusUnauthorized {
		t.Errorf("the printed token was refused")
	}
}

// startMCPHTTP starts skillhost mcp --http on a free loopback port with env
// added (and $SKILLHOST_MCP_TOKEN only if env sets it), and returns its URL
// and the token it printed, if it made one up.
func startMCPHTTP(t *testing.T, env ...string) (url, token string) {
	t.Helper()
	bin, pluginDir := skillhostBinary(t)
	skills, _ := mcpSkills(t)
	cmd := exec.Command(bin, "--skills", skills, "mcp", "--strategy", "null", "--http", "127.0.0.1:0", "--tools", "all")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SKILLHOST_MCP_TOKEN=") }),
		append([]string{"SKILLHOST_PLUGINS__DIRS=" + pluginDir}, env...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	scanner := bufio.NewScanner(stderr)
	for url == "" && scanner.Scan() {
		line := scanner.Text()
		if _, after, ok := strings.Cut(line, "bearer token for this server: "); ok {
			token, _, _ = strings.Cut(after, " ")
		}
		if _, after, ok := strings.Cut(line, "serving MCP on "); ok {
			url = after
		}
	}
	if url == "" {
		t.Fatal("skillhost mcp --http never said where it listens")
	}
	go io.Copy(io.Discard, stderr)
	return url, token
}

// A client's roots are the workspace of each call (issue 29, point 3):
// the script runs in the first root, the roots are granted (read by
// default), and when the client's roots change, the next call follows.
func TestMCPRootsAreTheWorkspace(t *testing.T) {
	bin, pluginDir := skillhostBinary(t)
	skills := t.TempDir()
	testskill.Add(t, skills, "where", testskill.Skill{Name: "where", Description: "test skill where", Body: "# where\n", Scripts: map[string]string{"look.sh": "#!/bin/sh\npwd\ncat notes.txt\n"}})
	rootA, rootB, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, text := range map[string]string{rootA: "from A", rootB: "from B"} {
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file://" + rootA, Name: "project"})
	cmd := exec.Command(bin, "--skills", skills, "mcp", "--strategy", "null", "--tools", "all")
	cmd.Dir = elsewhere // a desktop client starts the server anywhere
	// The roots are temporary directories, outside the default allowed
	// root (home): the operator allows their parent.
	cmd.Env = append(os.Environ(), "SKILLHOST_PLUGINS__DIRS="+pluginDir, "SKILLHOST_SANDBOX__ENABLED=true",
		"SKILLHOST_MCP__WORKSPACE_ROOTS="+filepath.Dir(rootA))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, &stderr)
	}
	defer session.Close()
	call := func() (string, map[string]any) {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "where__look", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call: %v\n%s", err, &stderr)
		}
		var rep map[string]any
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &rep)
		return text(res), rep
	}
	out, rep := call()
	realA, _ := filepath.EvalSymlinks(rootA)
	if !strings.Contains(out, realA) && !strings.Contains(out, rootA) || !strings.Contains(out, "from A") {
		t.Errorf("the call did not run in the client's root: %q", out)
	}
	if g, _ := rep["grant"].(map[string]any); !strings.Contains(fmt.Sprint(g["fs_read"]), realA) {
		t.Errorf("the root is not granted: %v", g)
	}
	client.RemoveRoots("file://" + rootA)
	client.AddRoots(&mcp.Root{URI: "file://" + rootB, Name: "other"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ = call()
		if strings.Contains(out, "from B") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server kept the old roots: %q\n%s", out, &stderr)
		}
		time.Sleep(50 * time.Millisecond) // the change notification is asynchronous
	}
}

// By default a skill's tools are offered once skill_activate names it
// (issue 29, point 5): the first list is the two disclosure tools, and
// activating a skill announces its tools.
func TestMCPToolsOnActivate(t *testing.T) {
	skills, _ := mcpSkills(t)
	c := startMCP(t, skills, "--tools", "activated")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	names := func() []string {
		list, err := c.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range list.Tools {
			out = append(out, tool.Name)
			if strings.HasPrefix(tool.Name, "kit__") && strings.Contains(tool.Description, "a kit of test tools") {
				t.Errorf("%s repeats its skill's description: %q", tool.Name, tool.Description)
			}
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"skill_activate", "skills_search"}) {
		t.Fatalf("first tool list %v; want only the disclosure tools", got)
	}
	// A search names the tools activation will offer.
	res := c.call(t, "skills_search", map[string]any{"query": "echo my arguments in brackets"})
	if raw, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(raw), `"kit__echo"`) {
		t.Errorf("skills_search before activation lists no tools: %s", raw)
	}
	c.call(t, "skill_activate", map[string]any{"name": "kit"})
	select {
	case <-c.toolsChanged:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after activation")
	}
	if got := names(); !slices.Contains(got, "kit__echo") || slices.Contains(got, "sleepy__nap") {
		t.Errorf("after activating kit: %v", got)
	}
}
