package sandbox

import (
	"reflect"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host/grant"
)

// Every field of the wire's grant is filled from the host's: a grant whose
// every field is set converts to a shared.Grant whose every field is set,
// so a field added to the contract but not copied here fails this test.
func TestWireGrantCopiesEveryField(t *testing.T) {
	cred := grant.Credential{Host: "h", Header: "Authorization", Prefix: "Bearer ", Value: "v", Placeholder: "p", PlaceholderEnv: "E"}
	g := grant.Grant{FSRead: []string{"/r"}, FSWrite: []string{"/w"}, Network: true, Timeout: time.Second, Trust: grant.TrustCore,
		Protected: []string{"/w/.git/hooks"}, Egress: &grant.Egress{Allow: []string{"a"}, Deny: []string{"d"}, Reasons: map[string]string{"d": "no"},
			DenyAddresses: []string{"10.0.0.0/8"}, Declared: []string{"a"}, Ceiling: []string{"*"}, Credentials: []grant.Credential{cred}}}
	w := WireGrant(g)
	for _, v := range []reflect.Value{reflect.ValueOf(w), reflect.ValueOf(*w.Egress), reflect.ValueOf(w.Egress.Credentials[0])} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Errorf("%s.%s is not filled from the host's grant", v.Type(), v.Type().Field(i).Name)
			}
		}
	}
	if !reflect.DeepEqual(w.Egress.Allow, g.Egress.Allow) || w.Timeout != g.Timeout || w.Egress.Credentials[0].Value != "v" {
		t.Errorf("wire grant %+v from %+v", w, g)
	}
	if WireGrant(grant.Grant{}).Egress != nil {
		t.Error("no egress became one")
	}
}
