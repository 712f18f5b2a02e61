// Command agent-loop embeds skillhost in a small agent: it activates the
// skills that fit the user's message, offers their tools to a chat model
// (host.Functions, in the request format host.FunctionDefs renders), runs
// the tools the model calls (output streams to stderr while they run)
// and feeds the results back until the model answers.
//
// With OPENAI_BASE_URL set it talks to that OpenAI-compatible endpoint
// (OPENAI_MODEL, default gpt-4o-mini; OPENAI_API_KEY if the endpoint needs
// one). Otherwise a scripted fake model drives the loop, so it runs offline:
//
//	make build && go run ./examples/agent-loop \
//	    "which words does examples/data/article.txt use most?"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/skillhost/skillhost/host"
	"github.com/skillhost/skillhost/host/events"
)

func main() {
	skills := flag.String("skills", "examples/skills", "skill root")
	strategy := flag.String("strategy", "", `sandbox plugin ("" uses the configuration, "none" runs unconfined)`)
	turns := flag.Int("turns", 6, "at most this many model turns")
	flag.Parse()
	message := strings.Join(flag.Args(), " ")
	if message == "" {
		message = "which words does examples/data/article.txt use most?"
	}
	var m model = scripted{}
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		m = newOpenAI(base, os.Getenv("OPENAI_API_KEY"), os.Getenv("OPENAI_MODEL"))
	}
	answer, err := runAgent(context.Background(), agentConfig{
		Skills: *skills, Strategy: *strategy, Turns: *turns, Model: m, Live: os.Stderr,
	}, message)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer)
}

// message is one entry of the conversation, in the chat-completions shape.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// model produces the next assistant message: text, or tool calls of the
// functions offered.
type model interface {
	Next(ctx context.Context, conversation []message, tools []host.Function) (message, error)
}

type agentConfig struct {
	Skills   string
	Strategy string
	Turns    int
	Model    model
	// Live receives tool output as it streams.
	Live io.Writer
}

// runAgent answers one user message.
func runAgent(ctx context.Context, cfg agentConfig, userMessage string) (string, error) {
	h, err := host.Open(host.Options{SkillRoots: []string{cfg.Skills}, Warnings: os.Stderr})
	if err != nil {
		return "", err
	}
	defer h.Close()

	act, err := h.Activate(ctx, userMessage)
	if err != nil {
		return "", err
	}
	// The matched skills' tools as functions: names unique among them and
	// valid for LLM APIs, and each one's parameter schema.
	tools := act.Tools
	system := "You are a helpful assistant. Call a tool when it helps; tool arguments go in \"args\" as a shell-style string, " +
		"or in \"argv\" as exact arguments."
	if act.Instructions != "" {
		system += "\n\nSkill instructions:\n\n" + act.Instructions
	}
	conversation := []message{{Role: "system", Content: system}, {Role: "user", Content: userMessage}}

	for range cfg.Turns {
		reply, err := cfg.Model.Next(ctx, conversation, tools)
		if err != nil {
			return "", err
		}
		conversation = append(conversation, reply)
		if len(reply.ToolCalls) == 0 {
			return reply.Content, nil
		}
		for _, call := range reply.ToolCalls {
			result := runTool(ctx, h, cfg, tools, call)
			conversation = append(conversation, message{Role: "tool", ToolCallID: call.ID, Content: result})
		}
	}
	return "", errors.New("the model did not answer within the turn limit")
}

// runTool runs one tool call and returns what the model sees: the result
// text, or the reason it could not run.
func runTool(ctx context.Context, h *host.Host, cfg agentConfig, tools []host.Function, call toolCall) string {
	var def *host.Function
	for i := range tools {
		if tools[i].Name == call.Function.Name {
			def = &tools[i]
		}
	}
	if def == nil {
		return fmt.Sprintf("Error: no tool named %q", call.Function.Name)
	}
	req, err := parseArgs(call.Function.Arguments)
	if err != nil {
		return "Error: " + err.Error()
	}
	req.Skill, req.Tool, req.Strategy = def.Skill, def.Tool, cfg.Strategy
	shown := strings.Join(req.Args, " ")
	if req.ArgString != nil {
		shown = *req.ArgString
	}
	fmt.Fprintf(cfg.Live, "[%s %s]\n", call.Function.Name, shown)
	res, err := h.Run(ctx, req,
		func(e events.Event) error {
			if d, ok := e.Data.(host.OutputDelta); ok {
				_, err := io.WriteString(cfg.Live, d.Delta)
				return err
			}
			return nil
		})
	if err != nil {
		return "Error: " + err.Error()
	}
	return res.Text()
}
