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

// AppendToward is [Append] for a buffer whose final length is expected to be size (a body's
// declared Content-Length, bounded by the caller): a growth that would double past size, while
// what dst then holds still fits in it, grows to exactly size instead, so a body of its declared
// length ends in one buffer of its size rather than one up to twice as large. It never grows
// faster than Append: a size that is wrong (smaller than the data, or larger than a doubling) is
// ignored. size <= 0 is Append.
func AppendToward[P ~[]byte | ~string](dst []byte, p P, size int) []byte {
	need := len(dst) + len(p)
	if need > cap(dst) && need <= size && size < 2*cap(dst) {
		grown := make([]byte, len(dst), size)
		copy(grown, dst)
		return append(grown, p...)
	}
	return Append(dst, p)
}
