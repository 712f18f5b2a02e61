package pluginclient

import (
	"strings"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

func TestReattachFor(t *testing.T) {
	const path = "/plugins/skillhost-sandbox-bwrap"
	for _, tc := range []struct {
		name, env, wantErr, wantAddr string
	}{
		{name: "unset"},
		{name: "another plugin", env: `{"echo":{"Protocol":"grpc","ProtocolVersion":1,"Addr":{"Network":"unix","String":"/tmp/p"}}}`},
		{name: "this plugin", env: `{"bwrap":{"Protocol":"grpc","ProtocolVersion":1,"Pid":7,"Test":true,"Addr":{"Network":"unix","String":"/tmp/p"}}}`, wantAddr: "/tmp/p"},
		{name: "not JSON", env: `{bwrap`, wantErr: shared.EnvPluginReattach},
		{name: "unknown network", env: `{"bwrap":{"Addr":{"Network":"carrier-pigeon","String":"x"}}}`, wantErr: "carrier-pigeon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(shared.EnvPluginReattach, tc.env)
			rc, err := reattachFor(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case rc == nil && tc.wantAddr != "":
				t.Errorf("no reattach config, want one at %s", tc.wantAddr)
			case rc != nil && (rc.Addr.String() != tc.wantAddr || rc.Pid != 7 || !rc.Test):
				t.Errorf("reattach = %+v, want pid 7 at %s in test mode", rc, tc.wantAddr)
			}
		})
	}
}
