package sim

// The prefix cache, as vLLM v1's KV cache manager keeps it
// (docs/vllm.md#prefix-caching): block-granular (blockSize tokens), full
// blocks only, each block keyed by a hash chained over the block's token
// IDs and its parent block's key, so two prompts share exactly the blocks
// of their common leading full blocks; a hit covers at most prompt − 1
// tokens (the last token is always computed, for its logits). Blocks a
// running request holds are never evicted; blocks no request holds stay
// cached in a free list and are evicted least recently used first when the
// KV cache needs their room. vLLM hashes cache_salt into block 0's key, so
// a salt isolates the whole chain: the simulator mixes the salt into every
// block's key instead (saltChain), which isolates the same blocks.

// maxCacheBlocks bounds the cache's bookkeeping (about 64 bytes a block),
// so a stream of distinct long prompts cannot grow the simulator's memory
// past ~32 MB: with more distinct cached blocks than this the simulator
// evicts earlier than a vLLM with a larger KV cache would.
const maxCacheBlocks = 1 << 19

// blockChain is a token sequence as the prefix cache sees it: the chained
// key of each full block and the tokens of the partial block after them.
// It is fed token IDs one at a time (add), so a 250K-token prompt is
// hashed while it is parsed and never kept.
type blockChain struct {
	blocks []uint64       // key of every full block, in order
	tail   [blockSize]int // the tokens of the partial block
	nTail  int            // how many of tail are set
	cur    uint64         // the running hash of the partial block
}

// chainSeed is the parent key of block 0 (vLLM's NONE_HASH).
const chainSeed = fnvOffset ^ 0x70726566697863 // "prefixc"

// add appends one token ID.
func (c *blockChain) add(id int) {
	if c.nTail == 0 {
		parent := uint64(chainSeed)
		if n := len(c.blocks); n > 0 {
			parent = c.blocks[n-1]
		}
		c.cur = mix64(parent)
	}
	c.tail[c.nTail] = id
	c.nTail++
	c.cur = (c.cur ^ uint64(id)) * fnvPrime
	if c.nTail == blockSize {
		c.blocks = append(c.blocks, c.cur)
		c.nTail = 0
	}
}

// tokens is the length of the sequence.
func (c *blockChain) tokens() int { return len(c.blocks)*blockSize + c.nTail }

// clip trims the block list's spare capacity (a parsed prompt keeps its
// keys until it finishes).
func (c *blockChain) clip() {
	if cap(c.blocks) > len(c.blocks)+len(c.blocks)/8 {
		c.blocks = append([]uint64(nil), c.blocks...)
	}
}

// extend returns the full-block keys of the sequence continued by n
// tokens of ID id, beyond the keys c already has: the blocks a request's
// output fills.
func (c *blockChain) extend(id, n int) []uint64 {
	d := blockChain{nTail: c.nTail, tail: c.tail, cur: c.cur}
	if len(c.blocks) > 0 {
		d.blocks = append(make([]uint64, 0, (c.nTail+n)/blockSize+1), c.blocks[len(c.blocks)-1])
	}
	skip := len(d.blocks) // the parent carried over
	for range n {
		d.add(id)
	}
	return d.blocks[skip:]
}

// saltChain mixes a cache_salt into every block key.
func saltChain(blocks []uint64, salt string) {
	s := hashString(fnvOffset^0x5bd1e995, salt)
	for i := range blocks {
		blocks[i] = mix64(blocks[i] ^ s)
	}
}

// mix64 is SplitMix64's finaliser: a bijective scramble of a 64-bit key.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// cachedBlock is one cached KV block: its key, how many running requests
// hold it, and its place in the free list when none does.
type cachedBlock struct {
	key        uint64
	refs       int32
	prev, next *cachedBlock // free list links (nil while held)
}

// prefixCache is the set of cached blocks. Free blocks (refs == 0) are in
// a doubly linked list, most recently freed at the front; eviction takes
// from the back.
type prefixCache struct {
	index    map[uint64]*cachedBlock
	free     cachedBlock // sentinel: free.next is the most recent, free.prev the least
	nFree    int
	resetReq bool // guarded by engine.mu
}

func newPrefixCache() *prefixCache {
	c := &prefixCache{index: map[uint64]*cachedBlock{}}
	c.free.next, c.free.prev = &c.free, &c.free
	return c
}

func (c *prefixCache) unlink(b *cachedBlock) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
	c.nFree--
}

func (c *prefixCache) pushFront(b *cachedBlock) {
	b.next, b.prev = c.free.next, &c.free
	c.free.next.prev = b
	c.free.next = b
	c.nFree++
}

func (c *prefixCache) ref(b *cachedBlock) {
	if b.refs == 0 && b.next != nil {
		c.unlink(b)
	}
	b.refs++
}

// acquire finds the longest run of leading keys that are cached, holds
// those blocks and returns them (appended to held).
func (c *prefixCache) acquire(keys []uint64, held []*cachedBlock) []*cachedBlock {
	for _, k := range keys {
		b, ok := c.index[k]
		if !ok {
			break
		}
		c.ref(b)
		held = append(held, b)
	}
	return held
}

// hold caches keys (those not cached yet) and holds them, appended to held.
func (c *prefixCache) hold(keys []uint64, held []*cachedBlock) []*cachedBlock {
	for _, k := range keys {
		b, ok := c.index[k]
		if !ok {
			b = &cachedBlock{key: k}
			c.index[k] = b
		}
		c.ref(b)
		held = append(held, b)
	}
	return held
}

// release lets go of held blocks, the last first, as vLLM frees a
// request's blocks in reverse so that a chain's tail is evicted before its
// head. A block dropped by a reset is simply forgotten.
func (c *prefixCache) release(held []*cachedBlock) {
	for i := len(held) - 1; i >= 0; i-- {
		b := held[i]
		b.refs--
		if b.refs > 0 {
			continue
		}
		if c.index[b.key] == b {
			c.pushFront(b)
		}
	}
}

// trim evicts the least recently used free blocks until at most maxFree
// are free and the cache holds at most maxCacheBlocks.
func (c *prefixCache) trim(maxFree int) {
	for c.nFree > 0 && (c.nFree > max(maxFree, 0) || len(c.index) > maxCacheBlocks) {
		b := c.free.prev
		c.unlink(b)
		delete(c.index, b.key)
	}
}

// reset forgets every cached block (POST /reset_prefix_cache); blocks
// running requests hold stay theirs until they finish, uncached.
func (c *prefixCache) reset() {
	for c.nFree > 0 {
		c.unlink(c.free.prev)
	}
	clear(c.index)
}
