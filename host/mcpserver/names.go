package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxToolName is the longest tool name offered. MCP allows 128 characters,
// but several clients reject names over 64.
const MaxToolName = 64

// toolNames assigns each (skill, tool) pair, given in a stable order, a
// distinct MCP tool name: "<skill>__<tool>" with every character outside
// [A-Za-z0-9_.-] replaced by "_", cut to MaxToolName with a hash of the
// full name so that long names stay distinct. taken holds names already in
// use (the disclosure tools).
func toolNames(pairs [][2]string, taken map[string]bool) []string {
	used := make(map[string]bool, len(taken)+len(pairs))
	for n := range taken {
		used[n] = true
	}
	out := make([]string, len(pairs))
	for i, p := range pairs {
		full := sanitize(p[0]) + "__" + sanitize(p[1])
		name := fit(full, "")
		for n := 2; used[name]; n++ {
			name = fit(full, fmt.Sprintf("_%d", n))
		}
		used[name] = true
		out[i] = name
	}
	return out
}

// fit returns name+suffix, shortened with a hash of name when too long.
func fit(name, suffix string) string {
	if len(name)+len(suffix) <= MaxToolName {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	tail := "_" + hex.EncodeToString(sum[:4]) + suffix
	return name[:MaxToolName-len(tail)] + tail
}

func sanitize(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
