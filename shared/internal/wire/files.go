package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/skillhost/skillhost/shared"
	executorv1 "github.com/skillhost/skillhost/shared/internal/proto/executor/v1"
)

// sendFiles streams the files a backend returned, in chunks of at most
// shared.MaxChunk, while they fit in limit bytes, and returns what it sent
// for the result and whether it left any out.
func sendFiles(files []shared.File, limit int64, send func(*executorv1.File) error) ([]*executorv1.FileInfo, bool, error) {
	if limit <= 0 {
		return nil, len(files) > 0, nil
	}
	var infos []*executorv1.FileInfo
	var total int64
	for _, f := range files {
		if total+int64(len(f.Data)) > limit {
			return infos, true, nil
		}
		total += int64(len(f.Data))
		data := f.Data
		for first := true; first || len(data) > 0; first = false {
			n := min(len(data), shared.MaxChunk)
			if err := send(&executorv1.File{Path: []byte(f.Path), Mode: f.Mode & 0o7777, Data: data[:n], Last: n == len(data)}); err != nil {
				return nil, false, err
			}
			data = data[n:]
		}
		sum := sha256.Sum256(f.Data)
		infos = append(infos, &executorv1.FileInfo{Path: []byte(f.Path), Size: int64(len(f.Data)), Sha256: hex.EncodeToString(sum[:])})
	}
	return infos, false, nil
}

// fileReceiver reassembles file events on the host side, refusing more
// than limit bytes in all: a plugin cannot make the host hold more than it
// asked for.
type fileReceiver struct {
	limit int64
	total int64
	files []shared.File
	open  bool // the last file has not had its last chunk yet
}

func (r *fileReceiver) add(f *executorv1.File) error {
	r.total += int64(len(f.GetData()))
	if r.total > r.limit {
		return fmt.Errorf("the plugin returned more than the %d bytes of files the request allows", r.limit)
	}
	path := string(f.GetPath())
	if r.open && r.files[len(r.files)-1].Path != path {
		return fmt.Errorf("the plugin started file %q before ending %q", path, r.files[len(r.files)-1].Path)
	}
	if !r.open {
		r.files = append(r.files, shared.File{Path: path, Mode: f.GetMode() & 0o7777})
	}
	last := &r.files[len(r.files)-1]
	last.Data = append(last.Data, f.GetData()...)
	r.open = !f.GetLast()
	return nil
}

// check compares what arrived with the result's list of files.
func (r *fileReceiver) check(infos []*executorv1.FileInfo) ([]shared.File, error) {
	if r.open {
		return nil, fmt.Errorf("the plugin did not finish file %q", r.files[len(r.files)-1].Path)
	}
	if len(infos) != len(r.files) {
		return nil, fmt.Errorf("the plugin sent %d files and listed %d", len(r.files), len(infos))
	}
	for i, f := range r.files {
		sum := sha256.Sum256(f.Data)
		in := infos[i]
		if string(in.GetPath()) != f.Path || in.GetSize() != int64(len(f.Data)) || in.GetSha256() != hex.EncodeToString(sum[:]) {
			return nil, fmt.Errorf("file %q did not arrive as the plugin listed it", f.Path)
		}
	}
	return r.files, nil
}
