package ojson

import "sync"

// Parser reads strict JSON exactly like [Parse] (same rules, same values, same errors) but keeps
// its memory from one call to the next, for callers that parse many short-lived documents, such as
// one per SSE event: after the first few calls, a call allocates only the copy of the input that
// the result's strings share.
//
// The arrays and members of the Value a call returns are cut from the Parser's memory and are
// reused by its next call; strings and number texts stay valid. Keep a part of the result beyond
// the next call only through [Value.Clone]. The memory kept between calls is bounded (at most 1024
// members and 1024 array elements, a few hundred KiB); containers of more than 64 entries are
// allocated on their own and not reused.
//
// The zero Parser is ready to use. A Parser is not safe for concurrent use.
type Parser struct {
	vstack []Value
	mstack []Member
	vals   slab[Value]
	mems   slab[Member]
}

// Parse reads data as [Parse] does; the result is valid until the next call (see [Parser]).
func (p *Parser) Parse(data []byte) (Value, error) {
	p.vals.reset()
	p.mems.reset()
	ip := parser{
		data: data, maxDepth: MaxDepth, mode: modeStrict,
		vstack: p.vstack[:0], mstack: p.mstack[:0], vals: &p.vals, mems: &p.mems,
	}
	v, err := ip.document()
	// After an error the stacks may still hold entries: drop them so they keep nothing alive.
	clear(ip.vstack)
	clear(ip.mstack)
	p.vstack, p.mstack = keepStack(ip.vstack), keepStack(ip.mstack)
	return v, err
}

// Release drops the memory the Parser keeps (the Values it returned stay valid until the next
// call to Parse, which then allocates afresh).
func (p *Parser) Release() {
	*p = Parser{}
}

// parserKeep bounds the memory a [Parser] keeps between calls, in elements per kind (Value or
// Member): containers beyond slabChunk elements are never cut from a slab, and at most
// parserKeep/slabChunk chunks and parserKeep stack entries are kept.
const (
	slabChunk  = 64
	parserKeep = 16 * slabChunk
)

// keepStack returns s emptied, or nil when its capacity is over parserKeep.
func keepStack[T any](s []T) []T {
	if cap(s) > parserKeep {
		return nil
	}
	return s[:0]
}

// slab hands out exact-size slices cut from reusable chunks of slabChunk elements.
type slab[T any] struct {
	chunks [][]T // chunks[:cur+1] are in use; each chunk is used from its start to its length
	cur    int
}

// take returns a slice of n zero elements whose capacity is n, so that appending to it never
// writes into the slab. Slices longer than slabChunk are allocated on their own.
func (s *slab[T]) take(n int) []T {
	if n > slabChunk {
		return make([]T, n)
	}
	if len(s.chunks) == 0 {
		s.chunks = append(s.chunks, make([]T, 0, slabChunk))
	}
	c := s.chunks[s.cur]
	if len(c)+n > cap(c) {
		s.cur++
		if s.cur == len(s.chunks) {
			s.chunks = append(s.chunks, make([]T, 0, slabChunk))
		}
		c = s.chunks[s.cur]
	}
	out := c[len(c) : len(c)+n : len(c)+n]
	s.chunks[s.cur] = c[:len(c)+n]
	return out
}

// reset zeroes what was handed out (so stale Values keep no strings alive and a Value kept
// without Clone reads as zeros instead of another document's data) and makes it available again,
// keeping at most parserKeep/slabChunk chunks.
func (s *slab[T]) reset() {
	for i, c := range s.chunks {
		clear(c)
		s.chunks[i] = c[:0]
	}
	if len(s.chunks) > parserKeep/slabChunk {
		clear(s.chunks[parserKeep/slabChunk:])
		s.chunks = s.chunks[:parserKeep/slabChunk]
	}
	s.cur = 0
}

// parseStacks are the scratch stacks of one parse.
type parseStacks struct {
	v []Value
	m []Member
}

// stackPool recycles the scratch stacks of [Parse] and [ParsePython] (a parse leaves them empty and
// zeroed), which were most of the allocations of parsing a small document.
var stackPool = sync.Pool{New: func() any { return new(parseStacks) }}

// parseWithPooledStacks runs p.document with stacks from stackPool and returns them.
func parseWithPooledStacks(p parser) (Value, error) {
	st := stackPool.Get().(*parseStacks)
	p.vstack, p.mstack = st.v[:0], st.m[:0]
	v, err := p.document()
	// After an error the stacks may still hold entries: drop them so they keep nothing alive.
	clear(p.vstack)
	clear(p.mstack)
	st.v, st.m = keepStack(p.vstack), keepStack(p.mstack)
	stackPool.Put(st)
	return v, err
}
