package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillhost/skillhost/internal/testpty"
)

// run --review on a terminal shows the changes with a diff and applies
// them only when the answer is yes; otherwise they are kept.
func TestReviewOnATerminal(t *testing.T) {
	if !landlockWorks(plugins(t)) {
		t.Skip("the Landlock plugin cannot confine here")
	}
	w := newPlantWorld(t, nil)
	for _, tc := range []struct {
		answer  string
		applied bool
	}{{"y", true}, {"n", false}} {
		t.Run(tc.answer, func(t *testing.T) {
			p := planting{script: `echo "a new line" >> README && echo fresh > made.txt`}
			ws, _ := w.setUp(t, p, "review-"+tc.answer)
			master, slave := testpty.Open(t)
			cmd := w.command(ws, w.bin, "--config", filepath.Join(w.base, "config.yaml"), "--skills", filepath.Join(w.base, "skills-review-"+tc.answer), "run", "--strategy", "landlock", "--review", "planter", "plant")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var screen bytes.Buffer
			buf := make([]byte, 4096)
			master.SetReadDeadline(time.Now().Add(2 * time.Minute))
			for !strings.Contains(screen.String(), "[y/N]") {
				n, err := master.Read(buf)
				if err != nil {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("read terminal: %v\n%s", err, screen.String())
				}
				screen.Write(buf[:n])
			}
			for _, want := range []string{"modified file " + filepath.Join(ws, "README"), "+a new line", "created  file " + filepath.Join(ws, "made.txt"), "+fresh"} {
				if !strings.Contains(screen.String(), want) {
					t.Errorf("the review does not show %q:\n%s", want, screen.String())
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
				t.Fatal("applied before the answer")
			}
			master.Write([]byte(tc.answer + "\n"))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			go func() {
				for {
					n, err := master.Read(buf)
					if err != nil {
						return
					}
					screen.Write(buf[:n])
				}
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatal("the run did not end after the answer")
			}
			_, err := os.Stat(filepath.Join(ws, "made.txt"))
			if got := err == nil; got != tc.applied {
				t.Errorf("answer %q: applied %v, want %v", tc.answer, got, tc.applied)
			}
			readme, _ := os.ReadFile(filepath.Join(ws, "README"))
			if got := strings.Contains(string(readme), "a new line"); got != tc.applied {
				t.Errorf("answer %q: README changed %v, want %v", tc.answer, got, tc.applied)
			}
		})
	}
}
