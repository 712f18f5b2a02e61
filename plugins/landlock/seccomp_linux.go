package landlock

// filterKey is what tells one run's seccomp filter from another's; the
// policy is package seccomppolicy's.
type filterKey struct{ network, loopback, landlockUnix, noMetadata bool }

// index is the key's place in seccomppolicy.Keys.
func (k filterKey) index() int {
	i := 0
	for bit, on := range []bool{k.network, k.loopback, k.landlockUnix, k.noMetadata} {
		if on {
			i |= 1 << bit
		}
	}
	return i
}
