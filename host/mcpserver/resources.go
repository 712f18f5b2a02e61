package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillhost/skillhost/host/grant"
	"github.com/skillhost/skillhost/host/internal/safeio"
	"github.com/skillhost/skillhost/host/skill"
	"github.com/skillhost/skillhost/host/term"
)

// MaxResourceSize bounds the files served as resources; larger files are
// not listed.
const MaxResourceSize = 8 << 20

// maxResourcesPerSkill bounds how many files of one skill are listed.
const maxResourcesPerSkill = 1000

// resourceDirs are the skill subdirectories whose files are served
// whatever their type (fonts, images, schemas).
var resourceDirs = []string{"references", "assets"}

// resourceFile is one servable file of a skill.
type resourceFile struct {
	skill string
	dir   string // the skill's directory
	rel   string // slash-separated path inside dir
	size  int64
}

func (f resourceFile) uri() string { return resourceURI(f.skill, f.rel) }

// resourceURI is skill://<skill>/<path>, with every byte of the skill name
// and of each path segment outside RFC 3986's unreserved set
// percent-encoded, so any name a lenient catalog accepts (even "a:b")
// makes a valid URI.
func resourceURI(skillName, rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = escape(s)
	}
	return "skill://" + escape(skillName) + "/" + strings.Join(segs, "/")
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// skillFiles lists the files of s served as resources: every regular text
// file in the skill directory (SKILL.md, the Markdown beside it, scripts),
// and every file under references/ and assets/ whatever its type, each at
// most MaxResourceSize; hidden files, caches and names that look like
// secrets are left out. Every path is checked through an os.Root at the
// skill directory, so a symlink (of a file or of a directory) that leads
// outside the skill is never listed.
func skillFiles(s *skill.Skill) []resourceFile {
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	var out []resourceFile
	add := func(rel string, anyType bool) {
		fi, err := root.Stat(rel) // follows symlinks, but only inside the root
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxResourceSize || len(out) >= maxResourcesPerSkill {
			return
		}
		if grant.LooksSecret("/"+filepath.ToSlash(rel)) || !anyType && !isTextFile(root, rel) {
			return
		}
		out = append(out, resourceFile{skill: s.Name, dir: s.Dir, rel: filepath.ToSlash(rel), size: fi.Size()})
	}
	add(filepath.Base(s.File), true)
	// WalkDir does not descend into symlinked directories; links to files
	// are checked by add.
	_ = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") || skippedDirs[e.Name()] && e.IsDir() {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() || p == filepath.Base(s.File) {
			return nil
		}
		top, _, _ := strings.Cut(p, "/")
		add(p, slices.Contains(resourceDirs, top))
		return nil
	})
	return out
}

// skippedDirs hold what a skill's author did not write: caches and
// installed dependencies.
var skippedDirs = map[string]bool{"__pycache__": true, "node_modules": true, ".git": true, "venv": true, ".venv": true}

// isTextFile reports whether the file rel in root is text: by its name's
// type when that is known, else by its start, which must be valid UTF-8
// with no NUL byte.
func isTextFile(root *os.Root, rel string) bool {
	if t := mimeType(rel); t != "application/octet-stream" && path.Ext(rel) != "" {
		return isText(t)
	}
	f, err := safeio.OpenRegularIn(root, rel)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 1024)
	n, _ := io.ReadFull(f, buf)
	head := buf[:n]
	if n == len(buf) {
		head = head[:term.WholeRunes(head)] // a character cut at the end of the sample
	}
	return utf8.Valid(head) && !bytes.Contains(head, []byte{0})
}

// readResource reads f through an os.Root, so that a symlink swapped in
// after listing still cannot lead outside the skill.
func readResource(f resourceFile) (*mcp.ResourceContents, error) {
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// Not blocking on a FIFO a skill ships, nor reading a device.
	file, err := safeio.OpenRegularIn(root, filepath.FromSlash(f.rel))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, MaxResourceSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResourceSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", f.rel, MaxResourceSize)
	}
	c := &mcp.ResourceContents{URI: f.uri(), MIMEType: mimeType(f.rel)}
	if isText(c.MIMEType) && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return c, nil
}

func (s *Server) resourceHandler(f resourceFile) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		c, err := readResource(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
			return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
}

// mimeTypes fixes the types of common skill files, independent of the
// machine's MIME database.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".csv": "text/csv",
	".tsv": "text/tab-separated-values", ".json": "application/json", ".yaml": "application/yaml",
	".yml": "application/yaml", ".xml": "application/xml", ".html": "text/html", ".htm": "text/html",
	".py": "text/x-python", ".sh": "text/x-shellscript", ".js": "text/javascript", ".ts": "text/x-typescript",
	".go": "text/x-go", ".rb": "text/x-ruby", ".toml": "application/toml", ".svg": "image/svg+xml",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".pdf": "application/pdf", ".zip": "application/zip",
}

func mimeType(rel string) string {
	ext := strings.ToLower(path.Ext(rel))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if base, _, err := mime.ParseMediaType(t); err == nil {
			return base
		}
	}
	if ext == "" {
		return "text/plain"
	}
	return "application/octet-stream"
}

func isText(t string) bool {
	switch t {
	case "application/json", "application/yaml", "application/xml", "application/toml", "image/svg+xml":
		return true
	}
	return strings.HasPrefix(t, "text/")
}
