package landlock

import (
	"context"
	"testing"

	"github.com/skillhost/skillhost/shared"
)

// Info declares the namespaces a run gets only where the kernel gives the
// view (a run that cannot have it fails): PID and mount, user when not
// root, the network unless granted whole; without the view, none.
func TestInfoDeclaresTheViewsNamespaces(t *testing.T) {
	for _, c := range []struct {
		f    Features
		want shared.Isolation
	}{
		{Features{Uid: 0, ReadOnlyView: true}, shared.Isolation{Network: shared.PrivateUnlessNetwork, PID: shared.Private, Mount: shared.Private}},
		{Features{Uid: 1000, ReadOnlyView: true}, shared.Isolation{Network: shared.PrivateUnlessNetwork, PID: shared.Private, Mount: shared.Private, User: shared.Private}},
		{Features{Uid: 1000, Namespaces: "none (user namespaces are disabled)"}, shared.Isolation{}},
	} {
		e := New()
		e.once.Do(func() {}) // the features below stand for this machine's
		e.features = c.f
		info, err := e.Info(context.Background())
		if err != nil || info.Isolation != c.want {
			t.Errorf("features %+v: Info isolation %+v, %v; want %+v", c.f, info.Isolation, err, c.want)
		}
	}
}
