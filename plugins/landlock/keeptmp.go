package landlock

import (
	"github.com/skillhost/skillhost/shared"

	"github.com/skillhost/skillhost/plugins/landlock/confiner"
)

// privateTmp reports whether the run's view has a /tmp of its own: it does
// unless a tree the request binds into the view is confiner.ViewTmp or contains it
// (a workspace of /tmp, a grant of /), which is then bound over the private
// tmpfs and shows the host's files there. Only a private /tmp has files a
// run "left" in it; asking the supervisor for those of the host's /tmp
// would ship every file under the host's temporary directories back to the
// plugin on every run (hundreds of milliseconds for a busy /tmp) and report
// them as discarded writes.
func privateTmp(req shared.Request) bool {
	for _, list := range [][]string{{req.SkillDir}, req.Grant.FSRead, req.Grant.FSWrite, req.ExecPaths} {
		for _, p := range list {
			if p != "" && shared.Under(confiner.ViewTmp, p) {
				return false
			}
		}
	}
	return true
}
