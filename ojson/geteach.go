package ojson

// GetEach is [Value.Get] of several keys at once: for each i it sets vals[i] and oks[i] to what
// Get(keys[i]) returns (the last member of that name), reading a raw object ([ParseLazy]) in one
// scan where each Get would scan it again, and allocating nothing. vals and oks must be at least
// as long as keys (it panics otherwise, a programming error); when v is not an object every ok is
// false. Safe for concurrent use on the same v.
func (v Value) GetEach(keys []string, vals []Value, oks []bool) {
	vals, oks = vals[:len(keys)], oks[:len(keys)]
	clear(vals)
	clear(oks)
	switch {
	case v.kind != KindObject:
	case v.isRaw():
		var it rawIter
		it.start(v.s)
		for k, e, ok := it.next(); ok; k, e, ok = it.next() {
			for i, key := range keys {
				if keyIs(k, key) {
					vals[i], oks[i] = rawValue(e), true
				}
			}
		}
	default:
		for _, m := range v.obj {
			for i, key := range keys {
				if m.Key == key {
					vals[i], oks[i] = m.Value, true
				}
			}
		}
	}
}
