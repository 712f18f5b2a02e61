package temporal

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/skillhost/skillhost/shared"
)

func TestExplainKeepsTheRefusalReason(t *testing.T) {
	s := Settings{Connection: Connection{Address: "c:7233"}}
	err := s.explain(refuseFor(shared.ReasonInterpreter, errors.New("worker w: add /opt/py to sandbox.interpreters")))
	if shared.RefusedFor(err) != shared.ReasonInterpreter || !strings.Contains(err.Error(), "sandbox.interpreters") {
		t.Errorf("%v (reason %q)", err, shared.RefusedFor(err))
	}
	if err := s.explain(refuse("plain")); shared.RefusedFor(err) != "" || err.Error() != "plain" {
		t.Errorf("%v", err)
	}
	other := s.explain(temporal.NewApplicationError("boom", "other"))
	if shared.RefusedFor(other) != "" || other.Error() != "boom" {
		t.Errorf("%v", other)
	}
}

func TestLacks(t *testing.T) {
	if got := lacks(shared.Enforcement{Timeout: true}, landlockClaims); got != "fs_read" {
		t.Errorf("lacks = %q", got)
	}
	if got := lacks(landlockClaims, landlockClaims); got != "" {
		t.Errorf("lacks = %q", got)
	}
}
