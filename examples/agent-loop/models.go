package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/skillhost/skillhost/host"
)

// parseArgs reads a tool call's JSON arguments, as host.Function's
// Parameters describe them: "args", one string split like a shell, or
// "argv", the exact arguments.
func parseArgs(raw string) (host.RunRequest, error) {
	var req host.RunRequest
	if strings.TrimSpace(raw) == "" {
		return req, nil
	}
	var in struct {
		Args *string  `json:"args"`
		Argv []string `json:"argv"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return req, fmt.Errorf("tool arguments %q: %w", raw, err)
	}
	if in.Args != nil && len(in.Argv) > 0 {
		return req, fmt.Errorf("tool arguments %q: pass either args or argv, not both", raw)
	}
	req.ArgString, req.Args = in.Args, in.Argv
	return req, nil
}

// scripted is a fake model for running offline: it calls the first tool
// offered with the first existing file named in the user's message, then
// answers with what the tool returned.
type scripted struct{}

func (scripted) Next(_ context.Context, conv []message, tools []host.Function) (message, error) {
	last := conv[len(conv)-1]
	if last.Role == "tool" {
		return message{Role: "assistant", Content: "Here is what the tool found:\n" + last.Content}, nil
	}
	if len(tools) == 0 {
		return message{Role: "assistant", Content: "No skill fits this request."}, nil
	}
	var file string
	for _, w := range strings.Fields(last.Content) {
		w = strings.TrimRight(w, "?.,!")
		if fi, err := os.Stat(w); err == nil && fi.Mode().IsRegular() {
			file = w
			break
		}
	}
	args, _ := json.Marshal(map[string]string{"args": file})
	var call toolCall
	call.ID, call.Type = "call_1", "function"
	call.Function.Name, call.Function.Arguments = pick(tools, last.Content).Name, string(args)
	return message{Role: "assistant", ToolCalls: []toolCall{call}}, nil
}

// pick prefers the tool whose name shares the most words with the request.
func pick(tools []host.Function, request string) host.Function {
	best, bestScore := tools[0], -1
	words := strings.Fields(strings.ToLower(request))
	for _, t := range tools {
		score := 0
		for _, part := range strings.FieldsFunc(strings.ToLower(t.Tool), func(r rune) bool { return r == '_' || r == '-' }) {
			for _, w := range words {
				if strings.HasPrefix(w, part) || strings.HasPrefix(part, strings.TrimRight(w, "s")) {
					score++
				}
			}
		}
		if score > bestScore {
			best, bestScore = t, score
		}
	}
	return best
}

// openAI calls an OpenAI-compatible /chat/completions endpoint.
type openAI struct {
	base, key, model string
	client           *http.Client
}

func newOpenAI(base, key, model string) *openAI {
	if model == "" {
		model = "gpt-4o-mini"
	}
	return &openAI{base: strings.TrimRight(base, "/"), key: key, model: model, client: &http.Client{Timeout: 2 * time.Minute}}
}

func (o *openAI) Next(ctx context.Context, conv []message, tools []host.Function) (message, error) {
	req := map[string]any{"model": o.model, "messages": conv}
	if len(tools) > 0 {
		defs, err := host.FunctionDefs(tools, host.FormatOpenAI)
		if err != nil {
			return message{}, err
		}
		req["tools"] = defs
	}
	body, err := json.Marshal(req)
	if err != nil {
		return message{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return message{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if o.key != "" {
		hr.Header.Set("Authorization", "Bearer "+o.key)
	}
	resp, err := o.client.Do(hr)
	if err != nil {
		return message{}, fmt.Errorf("chat completion: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return message{}, fmt.Errorf("chat completion: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return message{}, fmt.Errorf("chat completion: %s: %s", resp.Status, bytes.TrimSpace(data))
	}
	var out struct {
		Choices []struct {
			Message message `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return message{}, fmt.Errorf("chat completion: %w", err)
	}
	if len(out.Choices) == 0 {
		return message{}, fmt.Errorf("chat completion: no choices in %s", bytes.TrimSpace(data))
	}
	return out.Choices[0].Message, nil
}
