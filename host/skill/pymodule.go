package skill

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/skillhost/skillhost/host/internal/safeio"
)

// pythonScanLimit bounds how much of a Python file is read to decide
// whether it runs as a program: its __main__ guard is usually last.
const pythonScanLimit = 1 << 20

// pyVerdict is what a look at a Python file's top level concludes.
type pyVerdict int

const (
	// pyRunnable: the file does something when run, or it cannot be told
	// (a syntax error, an unreadable or very large file, a statement the
	// check does not know). When in doubt a file is runnable.
	pyRunnable pyVerdict = iota
	// pyLibrary: the top level only imports, defines and assigns constants.
	pyLibrary
	// pyRefuses: as pyLibrary, plus a __main__ guard that only raises or
	// exits with an error ("This module should not be run directly").
	pyRefuses
)

// Reasons a Python file under scripts/ is not a tool.
const (
	reasonLibrary = "a Python library (its top level only imports, defines and assigns constants)"
	reasonRefuses = "its __main__ guard only refuses to run (raises, or exits with an error)"
)

// pythonVerdict says whether a Python file does something when run as a
// program. head is the file's beginning as the scan already read it (nil
// when it could not be read): when it is the whole file, the file is not
// read again. A file that cannot be read, or is larger than
// pythonScanLimit, is runnable.
func pythonVerdict(path string, head []byte) pyVerdict {
	if head != nil && len(head) < headerLimit {
		return pythonSource(head)
	}
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return pyRunnable
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, pythonScanLimit))
	if err != nil || len(src) == pythonScanLimit {
		return pyRunnable
	}
	return pythonSource(src)
}

// codingCookie is PEP 263's encoding declaration, on line 1 or 2.
var codingCookie = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`) })

// pythonSource is pythonVerdict on the file's text. A file is a library
// only when every top-level statement is one of: an import, a def, async
// def or class (decorated or not), a string literal (a docstring), pass,
// an annotation, or an assignment of a constant expression (literals,
// names, attribute names and operators: no call, subscript, lambda or
// comprehension) to plain names; and a __main__ guard, if any, only
// raises or exits with a message or a non-zero status, after at most
// imports and prints. Anything else at top level (try, with, for, while,
// another if, a call, an assignment from a call, several statements on a
// line) makes it runnable, and so does what Python would reject before
// running anything: a NUL byte, invalid UTF-8 without a coding cookie, an
// unterminated string or bracket, an unexpected indent.
func pythonSource(src []byte) pyVerdict {
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	if bytes.IndexByte(src, 0) >= 0 {
		return pyRunnable
	}
	if !utf8.Valid(src) && !hasCodingCookie(src) {
		return pyRunnable
	}
	lines, ok := pyLines(src)
	if !ok {
		return pyRunnable
	}
	verdict := pyLibrary
	inBlock := false // the last top-level statement opened an indented block
	for i := 0; i < len(lines); i++ {
		t := lines[i].toks
		if lines[i].indent > 0 {
			if !inBlock {
				return pyRunnable // IndentationError
			}
			continue
		}
		inBlock = false
		if hasOp(t, ";") {
			return pyRunnable
		}
		switch {
		case isImport(t), isDocstring(t), isName(t, 0, "pass") && len(t) == 1, isConstAssign(t):
		case isName(t, 0, "def"), isName(t, 0, "class"), isName(t, 0, "async") && isName(t, 1, "def"):
			colon := topColon(t)
			if colon < 0 {
				return pyRunnable
			}
			inBlock = colon == len(t)-1
		case isOp(t, 0, "@"):
			// A decorator belongs to the def or class that follows.
			if i+1 >= len(lines) || lines[i+1].indent > 0 {
				return pyRunnable
			}
			n := lines[i+1].toks
			if !isOp(n, 0, "@") && !isName(n, 0, "def") && !isName(n, 0, "class") && !isName(n, 0, "async") {
				return pyRunnable
			}
		case isMainGuard(t):
			body := guardBody(t, lines[i+1:])
			if !refuses(body) {
				return pyRunnable
			}
			verdict = pyRefuses
			for i+1 < len(lines) && lines[i+1].indent > 0 {
				i++
			}
		default:
			return pyRunnable
		}
	}
	return verdict
}

func hasCodingCookie(src []byte) bool {
	for i, line := range bytes.SplitN(src, []byte("\n"), 3) {
		if i < 2 && codingCookie().Match(line) {
			m := strings.ToLower(string(codingCookie().FindSubmatch(line)[1]))
			return m != "utf-8" && m != "utf8"
		}
	}
	return false
}

// pyToken is one Python token: a name (keywords included), a number, a
// string (f-strings apart), or an operator or bracket.
type pyToken struct {
	kind byte // 'n' name, '0' number, 's' string, 'f' f-string, 'o' operator
	text string
}

// pyLine is one logical line: its indentation and its tokens.
type pyLine struct {
	indent int
	toks   []pyToken
}

// pyLines tokenizes src into logical lines, joining bracketed
// continuations, backslash continuations and multi-line strings, and
// dropping comments and blank lines. ok is false where Python's tokenizer
// fails: an unterminated string or bracket, an unmatched closing bracket,
// a stray backslash.
func pyLines(src []byte) (lines []pyLine, ok bool) {
	s := string(src)
	var cur *pyLine
	depth := 0
	end := func() {
		if cur != nil && len(cur.toks) > 0 {
			lines = append(lines, *cur)
		}
		cur = nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		if cur == nil { // the start of a logical line: measure its indentation
			j := i
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\f') {
				j++
			}
			cur = &pyLine{indent: j - i}
			i = j
			continue
		}
		switch {
		case c == '\n':
			i++
			if depth == 0 {
				end()
			}
		case c == ' ' || c == '\t' || c == '\f' || c == '\r':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '\\':
			switch {
			case strings.HasPrefix(s[i+1:], "\n"):
				i += 2
			case strings.HasPrefix(s[i+1:], "\r\n"):
				i += 3
			default:
				return nil, false
			}
		case c == '"' || c == '\'':
			n, ok := pyString(s[i:])
			if !ok {
				return nil, false
			}
			cur.toks = append(cur.toks, pyToken{'s', s[i : i+n]})
			i += n
		case c == '_' || c >= 0x80 || c|0x20 >= 'a' && c|0x20 <= 'z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 0x80 || s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			word := s[i:j]
			if j < len(s) && (s[j] == '"' || s[j] == '\'') && isStringPrefix(word) {
				n, ok := pyString(s[j:])
				if !ok {
					return nil, false
				}
				kind := byte('s')
				if strings.ContainsAny(word, "fF") {
					kind = 'f'
				}
				cur.toks = append(cur.toks, pyToken{kind, s[i : j+n]})
				i = j + n
				continue
			}
			cur.toks = append(cur.toks, pyToken{'n', word})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '.' || s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z' || s[j] >= '0' && s[j] <= '9' ||
				(s[j] == '+' || s[j] == '-') && s[j-1]|0x20 == 'e' && !strings.HasPrefix(strings.ToLower(s[i:]), "0x")) {
				j++
			}
			cur.toks = append(cur.toks, pyToken{'0', s[i:j]})
			i = j
		default:
			op := pyOp(s[i:])
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth--; depth < 0 {
					return nil, false
				}
			}
			cur.toks = append(cur.toks, pyToken{'o', op})
			i += len(op)
		}
	}
	if depth > 0 {
		return nil, false
	}
	end()
	return lines, true
}

// pyString returns the length of the string literal s starts with (at
// its opening quote), or false when it is not terminated.
func pyString(s string) (int, bool) {
	q := s[:1]
	if strings.HasPrefix(s, q+q+q) {
		q = q + q + q
	}
	for i := len(q); i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '\n' && len(q) == 1:
			return 0, false
		case strings.HasPrefix(s[i:], q):
			return i + len(q), true
		}
	}
	return 0, false
}

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf":
		return true
	}
	return false
}

var pyOps = []string{"**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "**", "//", "<<", ">>",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}

func pyOp(s string) string {
	for _, op := range pyOps {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

func isName(t []pyToken, i int, name string) bool {
	return i >= 0 && i < len(t) && t[i].kind == 'n' && t[i].text == name
}

func isOp(t []pyToken, i int, op string) bool {
	return i >= 0 && i < len(t) && t[i].kind == 'o' && t[i].text == op
}

// hasOp reports whether op occurs in t outside brackets.
func hasOp(t []pyToken, op string) bool {
	return topIndex(t, op) >= 0
}

// topIndex returns the index of the first op in t outside brackets, or -1.
func topIndex(t []pyToken, op string) int {
	depth := 0
	for i, k := range t {
		if k.kind != 'o' {
			continue
		}
		switch k.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case op:
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// topColon returns the index of the colon that ends a compound
// statement's header, or -1.
func topColon(t []pyToken) int { return topIndex(t, ":") }

func isImport(t []pyToken) bool {
	if isName(t, 0, "import") && len(t) > 1 {
		return true
	}
	if !isName(t, 0, "from") {
		return false
	}
	for i := 1; i < len(t); i++ {
		if isName(t, i, "import") {
			return i+1 < len(t)
		}
	}
	return false
}

// isDocstring reports a statement made of string literals only.
func isDocstring(t []pyToken) bool {
	for _, k := range t {
		if k.kind != 's' {
			return false
		}
	}
	return len(t) > 0
}

// isConstAssign reports an annotation (X: int) or an assignment of a
// constant expression to plain names (X = Y = 1, A, B = 1, 2,
// X: int = 3).
func isConstAssign(t []pyToken) bool {
	var parts [][]pyToken
	depth, start := 0, 0
	for i, k := range t {
		if k.kind != 'o' {
			continue
		}
		switch k.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case "=":
			if depth == 0 {
				parts = append(parts, t[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, t[start:])
	if len(parts) == 1 {
		// An annotation alone: NAME: type.
		return len(t) > 2 && t[0].kind == 'n' && isOp(t, 1, ":") && isAnnotation(t[2:])
	}
	for i, target := range parts[:len(parts)-1] {
		if i == 0 && len(parts) == 2 && len(target) > 2 && target[0].kind == 'n' && isOp(target, 1, ":") {
			if !isAnnotation(target[2:]) || keywords()[target[0].text] {
				return false
			}
			continue
		}
		if !isTarget(target) {
			return false
		}
	}
	return isConstExpr(parts[len(parts)-1])
}

// isTarget reports names, possibly in a tuple or list: A, (B, C), [D].
func isTarget(t []pyToken) bool {
	names := 0
	for _, k := range t {
		switch {
		case k.kind == 'n' && !keywords()[k.text]:
			names++
		case k.kind == 'o' && strings.Contains("()[],*", k.text) && len(k.text) == 1:
		default:
			return false
		}
	}
	return names > 0
}

// isAnnotation reports a type made of names, attributes, subscripts,
// strings and unions: dict[str, int] | None.
func isAnnotation(t []pyToken) bool {
	for _, k := range t {
		switch {
		case k.kind == 'n' && (!keywords()[k.text] || k.text == "None"), k.kind == 's':
		case k.kind == 'o' && (k.text == "." || k.text == "[" || k.text == "]" || k.text == "," || k.text == "|"):
		default:
			return false
		}
	}
	return len(t) > 0
}

// keywords are the Python keywords; of them only True, False and None are
// constants. Built on first use: most runs read no Python module.
var keywords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`False None True and as assert async await break class continue def del elif else
		except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield`) {
		m[k] = true
	}
	return m
})

// isConstExpr reports an expression that cannot run code of the file's
// own when evaluated: literals, names, attribute names, operators and
// brackets that build tuples, lists, sets and dicts, but no call,
// subscript, f-string, lambda, comprehension or other keyword.
func isConstExpr(t []pyToken) bool {
	if len(t) == 0 {
		return false
	}
	operand := func(k pyToken) bool {
		return k.kind != 'o' || k.text == ")" || k.text == "]" || k.text == "}"
	}
	for i, k := range t {
		// Two operands in a row are a syntax error, except strings,
		// which concatenate.
		if i > 0 && k.kind != 'o' && operand(t[i-1]) && !(k.kind == 's' && t[i-1].kind == 's') {
			return false
		}
		switch k.kind {
		case 's', '0':
		case 'n':
			if keywords()[k.text] && k.text != "True" && k.text != "False" && k.text != "None" {
				return false
			}
		case 'o':
			switch k.text {
			case "(", "[":
				// After an operand, a bracket calls or subscripts it.
				if i > 0 && operand(t[i-1]) {
					return false
				}
			case ")", "]", "{", "}", ",", ":", ".", "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "|", "&", "^", "~":
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isMainGuard reports if __name__ == "__main__": (either operand order).
func isMainGuard(t []pyToken) bool {
	if !isName(t, 0, "if") || !isOp(t, 2, "==") || !isOp(t, 4, ":") {
		return false
	}
	isMain := func(k pyToken) bool {
		return k.kind == 's' && (k.text == `"__main__"` || k.text == `'__main__'`)
	}
	return isName(t, 1, "__name__") && isMain(t[3]) || isMain(t[1]) && isName(t, 3, "__name__")
}

// guardBody returns the statements of a __main__ guard: those after its
// colon on the same line, else the indented lines that follow it.
func guardBody(header []pyToken, rest []pyLine) [][]pyToken {
	var body [][]pyToken
	if after := header[topColon(header)+1:]; len(after) > 0 {
		return splitStatements(after)
	}
	for _, l := range rest {
		if l.indent == 0 {
			break
		}
		body = append(body, splitStatements(l.toks)...)
	}
	return body
}

func splitStatements(t []pyToken) [][]pyToken {
	var out [][]pyToken
	for {
		i := topIndex(t, ";")
		if i < 0 {
			if len(t) > 0 {
				out = append(out, t)
			}
			return out
		}
		if i > 0 {
			out = append(out, t[:i])
		}
		t = t[i+1:]
	}
}

// refuses reports a guard body that can only fail: imports, docstrings and
// messages (print, sys.stderr.write) followed by a raise or an exit with a
// message or a non-zero status, as its last statement.
func refuses(body [][]pyToken) bool {
	if len(body) == 0 {
		return false
	}
	for _, st := range body[:len(body)-1] {
		if !isImport(st) && !isDocstring(st) && !isMessage(st) {
			return false
		}
	}
	last := body[len(body)-1]
	return isName(last, 0, "raise") || isFailingExit(last)
}

// isMessage reports print(...) or sys.stderr.write(...) whose arguments
// call nothing.
func isMessage(t []pyToken) bool {
	var args []pyToken
	switch {
	case isName(t, 0, "print") && isOp(t, 1, "("):
		args = t[2:]
	case len(t) > 6 && isName(t, 0, "sys") && isOp(t, 1, ".") && (isName(t, 2, "stderr") || isName(t, 2, "stdout")) &&
		isOp(t, 3, ".") && isName(t, 4, "write") && isOp(t, 5, "("):
		args = t[6:]
	default:
		return false
	}
	if !isOp(args, len(args)-1, ")") {
		return false
	}
	args = args[:len(args)-1]
	if len(args) == 0 {
		return true
	}
	// Keyword arguments (file=sys.stderr) and f-strings are fine here.
	var expr []pyToken
	for _, k := range args {
		switch {
		case k.kind == 'f':
			expr = append(expr, pyToken{'s', `""`})
		case k.kind == 'o' && k.text == "=":
			expr = append(expr, pyToken{'o', ","})
		default:
			expr = append(expr, k)
		}
	}
	return isConstExpr(expr)
}

// isFailingExit reports sys.exit, exit or quit with a string or a
// non-zero number: sys.exit("use it as a library"), sys.exit(1).
func isFailingExit(t []pyToken) bool {
	switch {
	case isName(t, 0, "sys") && isOp(t, 1, ".") && isName(t, 2, "exit"):
		t = t[3:]
	case isName(t, 0, "exit"), isName(t, 0, "quit"):
		t = t[1:]
	default:
		return false
	}
	if !isOp(t, 0, "(") || !isOp(t, len(t)-1, ")") {
		return false
	}
	arg := t[1 : len(t)-1]
	if len(arg) > 0 && isDocstring(arg) {
		return true
	}
	if len(arg) == 2 && isOp(arg, 0, "-") {
		arg = arg[1:]
	}
	return len(arg) == 1 && arg[0].kind == '0' && strings.Trim(arg[0].text, "0_.") != ""
}
