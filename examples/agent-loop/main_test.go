package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

const question = "which words does ../data/article.txt use most?"

func TestScriptedModel(t *testing.T) {
	var live strings.Builder
	answer, err := runAgent(context.Background(), agentConfig{
		Skills: "../skills", Strategy: "none", Turns: 4, Model: scripted{}, Live: &live,
	}, question)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(answer, "Here is what the tool found:\n") || !strings.Contains(answer, "4  scripts") {
		t.Errorf("answer %q", answer)
	}
	if !strings.HasPrefix(live.String(), "[text-stats__top_words ../data/article.txt]\n") || !strings.Contains(live.String(), "4  scripts") {
		t.Errorf("streamed %q", live.String())
	}
}

// TestOpenAICompatible runs the loop against a fake chat-completions
// endpoint on loopback and checks what goes over the wire.
func TestOpenAICompatible(t *testing.T) {
	var mu sync.Mutex
	var requests []map[string]any
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k3y" {
			http.Error(w, "bad request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",` +
				`"function":{"name":"text-stats__count","arguments":"{\"argv\":[\"../data/article.txt\"]}"}}]}}]}`))
			return
		}
		w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"It has 60 words."}}]}`))
	}))
	defer ts.Close()

	var live strings.Builder
	answer, err := runAgent(context.Background(), agentConfig{
		Skills: "../skills", Strategy: "none", Turns: 4, Model: newOpenAI(ts.URL+"/v1/", "k3y", "test-model"), Live: &live,
	}, "how many words does ../data/article.txt have?")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "It has 60 words." || len(requests) != 2 {
		t.Fatalf("answer %q after %d requests", answer, len(requests))
	}
	first, _ := json.Marshal(requests[0])
	for _, want := range []string{`"model":"test-model"`, `"type":"function"`, `"name":"text-stats__count"`, `"argv":{`, `"role":"system"`, `Text statistics`} {
		if !strings.Contains(string(first), want) {
			t.Errorf("first request lacks %s: %s", want, first)
		}
	}
	msgs := requests[1]["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool" || last["tool_call_id"] != "c1" || !strings.Contains(last["content"].(string), "5 lines, 60 words") {
		t.Errorf("tool result sent back: %v", last)
	}
	if !strings.HasPrefix(live.String(), "[text-stats__count ../data/article.txt]\n") || !strings.Contains(live.String(), "60 words") {
		t.Errorf("streamed %q", live.String())
	}
}

func TestEndpointErrors(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"quota"}`, http.StatusTooManyRequests)
	}))
	defer ts.Close()
	_, err := newOpenAI(ts.URL, "", "").Next(context.Background(), []message{{Role: "user", Content: "hi"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "quota") {
		t.Errorf("error %v", err)
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		raw       string
		argString string // "-" for none
		argv      []string
		err       string
	}{
		{"", "-", nil, ""},
		{"{}", "-", nil, ""},
		{`{"args":"a 'b c'"}`, "a 'b c'", nil, ""},
		{`{"args":""}`, "", nil, ""},
		{`{"argv":["a b","$HOME"]}`, "-", []string{"a b", "$HOME"}, ""},
		{`{"args":"a","argv":["b"]}`, "", nil, "either args or argv"},
		{`{"args":`, "", nil, "tool arguments"},
	}
	for _, tt := range tests {
		req, err := parseArgs(tt.raw)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseArgs(%q) error %v, want %q", tt.raw, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.raw, err)
			continue
		}
		got := "-"
		if req.ArgString != nil {
			got = *req.ArgString
		}
		if got != tt.argString || !slices.Equal(req.Args, tt.argv) {
			t.Errorf("parseArgs(%q) = %q %q, want %q %q", tt.raw, got, req.Args, tt.argString, tt.argv)
		}
	}
}
