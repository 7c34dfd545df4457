package gguf

import (
	"fmt"
	"math"
)

// Llama describes a llama-architecture model with random weights and the
// small SentencePiece ("llama") vocabulary of Vocab, for tests of a real
// llama.cpp server: its text is gibberish, its timing, batching, KV use and
// protocol are the engine's.
type Llama struct {
	Name      string // general.name
	Layers    int    // llama.block_count
	Width     int    // llama.embedding_length
	Heads     int    // llama.attention.head_count (and head_count_kv)
	FFN       int    // llama.feed_forward_length
	Context   int    // llama.context_length, the training context
	Seed      uint64 // of the weights
	WeightF16 bool   // matrices in f16 (norms stay f32), else f32
}

// The models genmodels writes: Tiny; Deep, Tiny three times as deep (a
// real slowdown per token); Other, Tiny's shape with other weights. The
// head size is 256/8 = 32, which the blocks of the quantized KV types
// (q8_0, q4_0, …: 32 elements) divide.
var (
	Tiny  = Llama{Name: "slogate-tiny", Layers: 4, Width: 256, Heads: 8, FFN: 512, Context: 32768, Seed: 1, WeightF16: true}
	Deep  = Llama{Name: "slogate-deep", Layers: 12, Width: 256, Heads: 8, FFN: 512, Context: 32768, Seed: 1, WeightF16: true}
	Other = Llama{Name: "slogate-other", Layers: 4, Width: 256, Heads: 8, FFN: 512, Context: 32768, Seed: 2, WeightF16: true}
)

// Models are the files genmodels writes, by file name.
var Models = []struct {
	File  string
	Model Llama
}{
	{"tiny.gguf", Tiny},
	{"deep.gguf", Deep},
	{"other.gguf", Other},
}

// The token types of tokenizer.ggml.token_type (enum llama_token_type).
const (
	tokenNormal  int32 = 1
	tokenUnknown int32 = 2
	tokenControl int32 = 3
	tokenByte    int32 = 6
)

// ChatTemplate is tokenizer.chat_template: ChatML, which llama.cpp's Jinja
// engine renders and its built-in templates recognise by <|im_start|>.
const ChatTemplate = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// specials are the first tokens: unknown, BOS, EOS, then ChatML's two.
var specials = []struct {
	text string
	typ  int32
}{
	{"<unk>", tokenUnknown},
	{"<s>", tokenControl},
	{"</s>", tokenControl},
	{"<|im_start|>", tokenControl},
	{"<|im_end|>", tokenControl},
}

// pieces are the vocabulary's normal tokens after the 256 byte tokens, in
// order of merge priority (SentencePiece merges the adjacent pair whose
// concatenation is the highest-scored token): single characters first,
// then English pairs and words, each made of two earlier pieces so that
// the merges reach it. "▁" (U+2581) stands for a space. Anything else
// falls back to byte tokens.
var pieces = []string{
	"▁", "e", "t", "a", "o", "i", "n", "s", "h", "r", "d", "l", "u", "c", "m", "w", "f", "g", "y", "p",
	"b", "v", "k", "x", "j", "q", "z", ".", ",", "'", "-", "\n",
	"▁t", "he", "▁a", "in", "er", "an", "re", "on", "▁th", "▁the", "en", "at", "or", "es", "is", "it",
	"▁s", "▁w", "▁o", "▁c", "▁b", "▁f", "▁m", "▁p", "▁d", "▁h", "▁i", "▁of", "▁an", "▁and", "▁in", "▁to",
	"▁is", "▁it", "nd", "ing", "ed", "ou", "ar", "al", "le", "st", "▁be", "as", "ion", "▁that",
	"ly", "▁re", "ent", "ll", "ve", "ro", "ic", "▁wh", "▁was", "▁for", "ri", "▁he", "▁on", "ce", "om",
	"▁with", "▁as", "li", "▁l", "▁n", "▁e", "▁g", "ter", "▁y", "▁you", "ers", "ch", "ur", "ti", "▁st",
	"ld", "▁ha", "▁his", "▁her", "▁not", "▁we", "▁they", "▁but", "▁had", "▁at", "▁by",
}

// Vocab returns the tokens, their scores and types: specials, the 256
// byte tokens <0x00>…<0xFF>, then pieces (duplicates dropped).
func Vocab() (tokens []string, scores []float32, types []int32) {
	for _, s := range specials {
		tokens = append(tokens, s.text)
		scores = append(scores, 0)
		types = append(types, s.typ)
	}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		scores = append(scores, 0)
		types = append(types, tokenByte)
	}
	seen := map[string]bool{}
	for _, p := range pieces {
		if seen[p] {
			continue
		}
		seen[p] = true
		tokens = append(tokens, p)
		scores = append(scores, -float32(len(seen)))
		types = append(types, tokenNormal)
	}
	return tokens, scores, types
}

// File builds m's GGUF: the metadata llama.cpp requires of a llama model
// and of a "llama" (SentencePiece) vocabulary, and its tensors, filled
// from m.Seed.
func (m Llama) File() (*File, error) {
	if m.Layers <= 0 || m.Width <= 0 || m.Heads <= 0 || m.FFN <= 0 || m.Width%m.Heads != 0 {
		return nil, fmt.Errorf("gguf: bad shape %+v", m)
	}
	tokens, scores, types := Vocab()
	nv := uint64(len(tokens))
	head := m.Width / m.Heads
	fileType := uint32(0) // LLAMA_FTYPE_ALL_F32
	if m.WeightF16 {
		fileType = 1 // LLAMA_FTYPE_MOSTLY_F16
	}
	f := &File{KV: []KV{
		{"general.architecture", "llama"},
		{"general.name", m.Name},
		{"general.file_type", fileType},
		{"general.alignment", uint32(DefaultAlignment)},
		{"llama.vocab_size", uint32(nv)},
		{"llama.context_length", uint32(m.Context)},
		{"llama.embedding_length", uint32(m.Width)},
		{"llama.block_count", uint32(m.Layers)},
		{"llama.feed_forward_length", uint32(m.FFN)},
		{"llama.attention.head_count", uint32(m.Heads)},
		{"llama.attention.head_count_kv", uint32(m.Heads)},
		{"llama.rope.dimension_count", uint32(head)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.add_bos_token", true},
		{"tokenizer.ggml.add_eos_token", false},
		{"tokenizer.chat_template", ChatTemplate},
	}}
	rng := splitmix64(m.Seed)
	w, n := uint64(m.Width), uint64(m.FFN)
	matrix := func(name string, in, out uint64) {
		// ggml's order: ne[0] = in (the row), ne[1] = out. Uniform with
		// variance 1/in keeps the activations' scale through the layers.
		f.Tensors = append(f.Tensors, rng.tensor(name, []uint64{in, out}, float32(math.Sqrt(3/float64(in))), m.WeightF16))
	}
	ones := func(name string) {
		d := make([]byte, 4*w)
		for i := range w {
			putF32(d[4*i:], 1)
		}
		f.Tensors = append(f.Tensors, Tensor{Name: name, Dims: []uint64{w}, Type: F32, Data: d})
	}
	matrix("token_embd.weight", w, nv)
	ones("output_norm.weight")
	matrix("output.weight", w, nv)
	for l := range m.Layers {
		b := fmt.Sprintf("blk.%d.", l)
		ones(b + "attn_norm.weight")
		matrix(b+"attn_q.weight", w, w)
		matrix(b+"attn_k.weight", w, w)
		matrix(b+"attn_v.weight", w, w)
		matrix(b+"attn_output.weight", w, w)
		ones(b + "ffn_norm.weight")
		matrix(b+"ffn_gate.weight", w, n)
		matrix(b+"ffn_up.weight", w, n)
		matrix(b+"ffn_down.weight", n, w)
	}
	return f, nil
}

// prng is splitmix64 (Steele, Lea, Flood 2014): its own generator, so the
// bytes depend on nothing but the seed.
type prng struct{ s uint64 }

func splitmix64(seed uint64) *prng { return &prng{seed} }

func (p *prng) next() uint64 {
	p.s += 0x9e3779b97f4a7c15
	z := p.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform is in [-bound, bound), from the top 24 bits.
func (p *prng) uniform(bound float32) float32 {
	u := float32(p.next()>>40) / (1 << 24)
	return (2*u - 1) * bound
}

func (p *prng) tensor(name string, dims []uint64, bound float32, f16 bool) Tensor {
	n := dims[0] * dims[1]
	t := Tensor{Name: name, Dims: dims, Type: F32}
	if f16 {
		t.Type = F16
	}
	t.Data = make([]byte, n*uint64(t.Type.Size()))
	for i := range n {
		v := p.uniform(bound)
		if f16 {
			h := Float16(v)
			t.Data[2*i], t.Data[2*i+1] = byte(h), byte(h>>8)
		} else {
			putF32(t.Data[4*i:], v)
		}
	}
	return t
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

// Float16 is v as an IEEE 754 half, rounded to nearest even (overflow to
// infinity, NaN kept a NaN).
func Float16(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 0x1f: // overflow, infinity
		return sign | 0x7c00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is right
	}
	return sign | uint16(h)
}
