package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/yamlnode"
)

// EnvPrefix starts every environment override: SKILLHOST_SANDBOX__NETWORK
// sets sandbox.network. Variables without a double underscore after the
// prefix (SKILLHOST_CONFIG) are not overrides.
const EnvPrefix = "SKILLHOST_"

// EnvConfig names the configuration file when --config is not given.
const EnvConfig = "SKILLHOST_CONFIG"

// Error is a configuration problem; the CLI reports it with exit status 2.
type Error struct {
	Source string // file or environment variable
	Err    error
}

func (e *Error) Error() string { return e.Source + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// DefaultPath returns $XDG_CONFIG_HOME/skillhost/config.yaml, falling back to
// ~/.config/skillhost/config.yaml.
func DefaultPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "skillhost", "config.yaml")
}

// Path returns the file Load reads for an explicit path (from --config):
// that path, else $SKILLHOST_CONFIG, else DefaultPath. required reports
// whether the file must exist (it was named explicitly).
func Path(explicit string) (path string, required bool) {
	if explicit != "" {
		return explicit, true
	}
	if p := os.Getenv(EnvConfig); p != "" {
		return p, true
	}
	return DefaultPath(), false
}

// Load reads the configuration: defaults, then the file chosen by Path,
// then environment overrides, then validation.
func Load(explicit string) (*Config, error) {
	cfg := Default()
	path, required := Path(explicit)
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := cfg.decodeFile(path, data); err != nil {
				return nil, err
			}
			cfg.Source = path
		case !required && errors.Is(err, os.ErrPermission):
			// Another user's HOME, inherited: its configuration is not
			// this user's to read, and listing skills need not fail.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("configuration %s: %v; using the defaults (pass --config or set %s to read another file)", path, err, EnvConfig))
		case required || !errors.Is(err, os.ErrNotExist):
			return nil, &Error{Source: path, Err: err}
		}
	}
	if err := cfg.applyEnv(os.Environ()); err != nil {
		return nil, err
	}
	if cfg.Sandbox.FSRead == nil { // fs_read: null means the default
		cfg.Sandbox.FSRead = []string{"."}
	}
	if cfg.MCP.WorkspaceRoots == nil { // workspace_roots: null means the default
		cfg.MCP.WorkspaceRoots = append([]string(nil), DefaultWorkspaceRoots...)
	}
	if err := cfg.Validate(); err != nil {
		return nil, &Error{Source: cfg.describeSource(), Err: cfg.withLines(err)}
	}
	return cfg, nil
}

// withLines prefixes each "key.path: problem" line of err with the line of
// that key in the file, when the file set it.
func (c *Config) withLines(err error) error {
	if c.root == nil {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		key, _, ok := strings.Cut(l, ": ")
		if !ok || strings.ContainsAny(key, " \"") {
			continue
		}
		if n := lookup(c.root, strings.Split(key, ".")...); n != nil && n.Line > 0 {
			lines[i] = fmt.Sprintf("line %d: %s", n.Line, l)
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

func (c *Config) describeSource() string {
	if c.Source == "" {
		return "configuration"
	}
	return c.Source
}

func (c *Config) decodeFile(path string, data []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if line := unclosedFlow(data); line > 0 && strings.Contains(msg, "did not find expected") {
			msg = errLineRe().ReplaceAllString(msg, "")
			msg = fmt.Sprintf("line %d: a [ or { is never closed (%s)", line, msg)
		}
		return &Error{Source: path, Err: fmt.Errorf("invalid YAML: %s", msg)}
	}
	if len(doc.Content) == 0 {
		return nil // empty file: defaults
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return &Error{Source: path, Err: errors.New("the configuration must be a mapping of sections")}
	}
	for _, d := range moveDeprecated(root) {
		c.Deprecations = append(c.Deprecations, path+": "+d)
	}
	if err := checkKeys(root, reflect.TypeOf(*c), ""); err != nil {
		return &Error{Source: path, Err: err}
	}
	if err := checkNulls(root); err != nil {
		return &Error{Source: path, Err: err}
	}
	if err := root.Decode(c); err != nil {
		return &Error{Source: path, Err: decodeError(err, root)}
	}
	c.root = root
	return nil
}

// checkNulls refuses a bare YAML null where the null plugin's name was
// surely meant: as sandbox.strategy, or as a key under plugins.sha256; and
// where the home directory was: ~ in mcp.workspace_roots.
func checkNulls(root *yaml.Node) error {
	if n := lookup(root, "sandbox", "strategy"); n != nil && yamlnode.IsNull(n) {
		return fmt.Errorf(`line %d: sandbox.strategy: a bare null is YAML's "no value"; write strategy: "null" (quoted) for the null plugin, or auto`, n.Line)
	}
	if l := lookup(root, "mcp", "workspace_roots"); l != nil && l.Kind == yaml.SequenceNode {
		for _, e := range l.Content {
			if yamlnode.IsNull(e) { // the decoder would drop it: [~] would allow nothing
				return fmt.Errorf(`line %d: mcp.workspace_roots: a bare ~ or null is YAML's "no value"; write "~" (quoted) for the home directory`, e.Line)
			}
		}
	}
	if m := lookup(root, "plugins", "sha256"); m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i < len(m.Content); i += 2 {
			if yamlnode.IsNull(m.Content[i]) {
				return fmt.Errorf(`line %d: plugins.sha256: a bare null key is YAML's "no value"; write "null": (quoted) to pin the null plugin`, m.Content[i].Line)
			}
		}
	}
	return nil
}

// lookup follows keys through nested mappings.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		n = valueOf(n, k)
	}
	return n
}

// valueOf returns the value of key in mapping m, or nil. Of repeated keys
// (which decoding refuses later) the last counts.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v = m.Content[i+1]
		}
	}
	return v
}

// keyAt returns the dotted key whose value starts on line, or "".
func keyAt(n *yaml.Node, line int, prefix string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Line == line && v.Kind == yaml.ScalarNode || k.Line == line && v.Kind != yaml.MappingNode {
			return prefix + k.Value
		}
		if found := keyAt(v, line, prefix+k.Value+"."); found != "" {
			return found
		}
	}
	return ""
}

var errLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

// decodeError rewrites YAML decode errors to name keys instead of Go types.
func decodeError(err error, root *yaml.Node) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return errors.New(withKey(cleanDecodeError(err).Error(), root))
	}
	var msgs []string
	for _, e := range te.Errors {
		msgs = append(msgs, goTypeRe().ReplaceAllString(withKey(e, root), "here"))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// withKey adds the dotted key to a "line N: ..." message.
func withKey(msg string, root *yaml.Node) string {
	if m := errLineRe().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if key := keyAt(root, line, ""); key != "" && !strings.HasPrefix(msg[len(m[0]):], key+":") {
			msg = strings.Replace(msg, m[0], m[0]+key+": ", 1)
		}
	}
	return msg
}

// unclosedFlow finds the line of a [ or { that is never closed: YAML
// reports such an error where the enclosing mapping starts, not where the
// bracket is.
func unclosedFlow(data []byte) int {
	var stack []int
	for i, line := range strings.Split(string(data), "\n") {
		quote := byte(0)
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '"' || c == '\'':
				if j == 0 || strings.ContainsRune(" \t[{,:", rune(line[j-1])) {
					quote = c
				}
			case c == '#' && (j == 0 || line[j-1] == ' ' || line[j-1] == '\t'):
				j = len(line)
			case c == '[' || c == '{':
				stack = append(stack, i+1)
			case (c == ']' || c == '}') && len(stack) > 0:
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) > 0 {
		return stack[0]
	}
	return 0
}

// checkKeys reports the first key of n that has no field in t, by its
// dotted path and line.
func checkKeys(n *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type checks its own keys, or keeps them unread
	}
	if n.Kind == yaml.MappingNode && t.Kind() == reflect.Map && t.Elem().Kind() == reflect.Struct {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i+1], t.Elem(), prefix+n.Content[i].Value+"."); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		f, ok := fieldByTag(t, key.Value)
		if !ok {
			return fmt.Errorf("line %d: unknown key %s%s (known: %s)", key.Line, prefix, key.Value, strings.Join(tags(t), ", "))
		}
		if err := wholeNumber(val, f.Type); err != nil {
			return fmt.Errorf("line %d: %s%s: %w", val.Line, prefix, key.Value, err)
		}
		if err := checkKeys(val, f.Type, prefix+key.Value+"."); err != nil {
			return err
		}
	}
	return nil
}

// wholeNumber refuses a fraction for an integer setting: YAML's decoder
// would silently drop what follows the point (limit: 2.5 would be 2). A
// whole number written as a float (2.0, 1e1) is one.
func wholeNumber(n *yaml.Node, t reflect.Type) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // it reads its own values (a timeout in seconds may be 2.5)
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var f float64
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" && (n.Decode(&f) != nil || math.IsInf(f, 0) || f != math.Trunc(f)) {
			return fmt.Errorf("%s is not a whole number", n.Value)
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag := strings.Split(f.Tag.Get("yaml"), ",")[0]; tag == name && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tags(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	sort.Strings(out)
	return out
}

var goTypeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`into [\w.\[\]*]+`) })

// cleanDecodeError removes Go type names from YAML decode errors; users
// know keys, not types.
func cleanDecodeError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = goTypeRe().ReplaceAllString(msg, "into this key")
	return errors.New(msg)
}

// applyEnv applies SKILLHOST_<SECTION>__<KEY>[__<SUBKEY>] overrides in a
// stable order. An empty value is ignored, as if the variable were unset. A value is parsed as YAML for the key's type; for a list key
// a value that is not a YAML list is split on commas.
func (c *Config) applyEnv(environ []string) error {
	sort.Strings(environ)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || !strings.Contains(name[len(EnvPrefix):], "__") || value == "" {
			continue // not an override, or set empty, which counts as unset
		}
		path := strings.Split(strings.ToLower(name[len(EnvPrefix):]), "__")
		seen := len(c.Deprecations)
		if err := c.override(path, value); err != nil {
			return &Error{Source: "environment variable " + name, Err: err}
		}
		for i := seen; i < len(c.Deprecations); i++ {
			c.Deprecations[i] = "environment variable " + name + ": " + c.Deprecations[i]
		}
	}
	return nil
}

func (c *Config) override(path []string, value string) error {
	for _, m := range moved {
		if len(path) > len(m.old) && slices.Equal(path[:len(m.old)], m.old) {
			c.Deprecations = append(c.Deprecations, fmt.Sprintf("%s is deprecated; write its settings under plugins.config.%s",
				strings.Join(m.old, "."), m.plugin))
			path = append([]string{"plugins", "config", m.plugin}, path[len(m.old):]...)
		}
	}
	if len(path) >= 3 && path[0] == "plugins" && path[1] == "config" {
		if len(path) == 3 {
			return fmt.Errorf("plugins.config.%s: set one setting at a time (SKILLHOST_PLUGINS__CONFIG__%s__<KEY>)", path[2], strings.ToUpper(path[2]))
		}
		if c.Plugins.Config == nil {
			c.Plugins.Config = map[string]PluginConfig{}
		}
		pc := c.Plugins.Config[path[2]]
		if err := pc.set(path[3:], value); err != nil {
			return fmt.Errorf("plugins.config.%s: %w", path[2], err)
		}
		c.Plugins.Config[path[2]] = pc
		return nil
	}
	t := reflect.TypeOf(*c)
	for i, key := range path {
		f, ok := fieldByTag(t, key)
		if !ok {
			return fmt.Errorf("unknown key %s (known: %s)", strings.Join(path[:i+1], "."), strings.Join(tags(t), ", "))
		}
		t = f.Type
		if i < len(path)-1 && t.Kind() != reflect.Struct {
			return fmt.Errorf("%s is not a section", strings.Join(path[:i+1], "."))
		}
	}
	leaf, err := valueNode(t, value)
	if err == nil {
		err = wholeNumber(leaf, t)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(path, "."), err)
	}
	node := leaf
	for i := len(path) - 1; i >= 0; i-- {
		node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[i]}, node,
		}}
	}
	if err := node.Decode(c); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(path, "."), cleanDecodeError(err))
	}
	return nil
}

func valueNode(t reflect.Type, value string) (*yaml.Node, error) {
	if t.Kind() == reflect.Slice && !strings.HasPrefix(strings.TrimSpace(value), "[") {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, item := range strings.Split(value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: item})
			}
		}
		return seq, nil
	}
	if t.Kind() == reflect.String || t.Kind() == reflect.Bool {
		// Strings stay literal; booleans accept what YAML 1.1 and humans do.
		if t.Kind() == reflect.Bool {
			b, ok := grant.BoolWord(value)
			if !ok {
				return nil, fmt.Errorf("%q is not true or false", value)
			}
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}, nil
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, nil
	}
	clearLines(doc.Content[0]) // a variable's value has no line worth naming
	return doc.Content[0], nil
}

func clearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearLines(c)
	}
}
