package host

import (
	"fmt"
	"io"
	"strings"

	"github.com/skillhost/skillhost/host/changeset"
	"github.com/skillhost/skillhost/host/internal/safeio"
	"github.com/skillhost/skillhost/host/term"
)

// maxDiffed bounds the files ChangeDiff compares.
const maxDiffed = 256 << 10

// ChangeDiff is a line diff of a created or modified text file of run:
// the lines its staged version removes ("-") and adds ("+") against the
// host's, each through term.Printable. It is nil for anything else: a
// deletion, a directory or link, binary or large files, or a file that
// cannot be read as a regular file (neither side is followed through a
// link or waited on).
func (h *Host) ChangeDiff(run string, c changeset.Change) []string {
	if c.Type != changeset.TypeFile || c.Kind == changeset.Deleted {
		return nil
	}
	after, err := readText(h.StagedPath(run, c))
	if err != nil {
		return nil
	}
	var before []string
	if c.Kind == changeset.Modified {
		if before, err = readText(c.Path); err != nil {
			return nil
		}
	}
	return lineDiff(before, after)
}

func readText(path string) ([]string, error) {
	f, err := safeio.OpenRegularNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiffed+1))
	if err != nil || len(data) > maxDiffed || strings.ContainsRune(string(data), 0) {
		return nil, fmt.Errorf("%s: not text, or too large to show", path)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

// lineDiff is a longest-common-subsequence diff of two short texts.
func lineDiff(a, b []string) []string {
	if len(a)*len(b) > 4_000_000 {
		return []string{fmt.Sprintf("(%d lines before, %d after: too long to compare here)", len(a), len(b))}
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+"+term.Printable(b[j]))
			j++
		default:
			out = append(out, "-"+term.Printable(a[i]))
			i++
		}
	}
	return out
}
