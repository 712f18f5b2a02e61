//go:build !unix

package changeset

import "time"

// Apply refuses every change: staged writes are applied only on Unix.
func Apply(cs []Change, p Policy, stage func(Change) string, run string, started time.Time, named []string) {
	for i := range cs {
		if cs[i].Outcome == "" || cs[i].Outcome == Kept {
			cs[i].Outcome, cs[i].Reason = Refused, "staged writes are applied only on Unix"
		}
	}
}
