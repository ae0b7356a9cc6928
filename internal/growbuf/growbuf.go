package growbuf

// minCap is the capacity of a buffer's first allocation, in bytes.
const minCap = 512

// Append appends the bytes of p (a []byte or a string) to dst and returns the extended buffer, like
// the built-in append; when dst is full it is moved to a new buffer of twice its capacity (at least
// minCap, at least what p needs). dst is not modified beyond its length; like append, the result may
// share dst's memory.
func Append[P ~[]byte | ~string](dst []byte, p P) []byte {
	need := len(dst) + len(p)
	if need <= cap(dst) {
		return append(dst, p...)
	}
	grown := make([]byte, len(dst), max(2*cap(dst), need, minCap))
	copy(grown, dst)
	return append(grown, p...)
}
