package landlock

import "github.com/skillhost/skillhost/plugins/landlock/confiner"

// seccompFilter is the filter for a run of kind key, from the table
// written from package seccomppolicy (TestSeccompFilterTable checks it),
// so the plugin neither links the assembler nor assembles at start.
// Callers share the filter and must not change it.
func seccompFilter(key filterKey) (confiner.Filter, error) {
	return seccompFilters[key.index()], nil
}
