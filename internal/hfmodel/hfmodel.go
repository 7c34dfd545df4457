// Package hfmodel writes random-weight causal language models in the
// Hugging Face layout, for tests of a real vLLM (or SGLang, or
// transformers) that must run without the hub: a directory of
// config.json, generation_config.json, model.safetensors (BF16),
// tokenizer.json, tokenizer_config.json and special_tokens_map.json. It is
// internal/gguf's counterpart for the engines that load that layout: the
// text is gibberish, the timing, batching, KV use and protocol are the
// engine's.
//
// The models are LlamaForCausalLM. The tokenizer is byte level with no
// merges (tokenizer.go): any text is one token per UTF-8 byte and decodes
// back exactly, and the only other tokens are ChatML's. The output
// projection (lm_head) is zero but for the rows of the printable ASCII
// bytes, so greedy decoding writes one printable character per token and
// never EOS (see lmHead).
package hfmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Llama describes a llama-architecture model in the Hugging Face layout
// with random weights and the byte-level vocabulary of Vocab. Its fields
// are config.json's shape, plain so that they can be retuned.
type Llama struct {
	Name    string // the model's name, shown by genmodels (servers name a model by its path or flag)
	Layers  int    // num_hidden_layers
	Hidden  int    // hidden_size
	Heads   int    // num_attention_heads
	KVHeads int    // num_key_value_heads
	HeadDim int    // head_dim
	FFN     int    // intermediate_size
	Context int    // max_position_embeddings
	Seed    uint64 // of the weights (math/rand/v2's PCG)
}

// The models genmodels writes: Tiny; Deep, Tiny four times as deep (a
// real, deterministic slowdown per token); Other, Tiny's shape with other
// weights (as fast, other outputs).
var (
	Tiny  = Llama{Name: "slogate-tiny", Layers: 2, Hidden: 256, Heads: 4, KVHeads: 4, HeadDim: 64, FFN: 768, Context: 32768, Seed: 1}
	Deep  = Llama{Name: "slogate-deep", Layers: 8, Hidden: 256, Heads: 4, KVHeads: 4, HeadDim: 64, FFN: 768, Context: 32768, Seed: 1}
	Other = Llama{Name: "slogate-other", Layers: 2, Hidden: 256, Heads: 4, KVHeads: 4, HeadDim: 64, FFN: 768, Context: 32768, Seed: 2}
)

// Models are the models genmodels writes, by directory name.
var Models = []struct {
	Dir   string
	Model Llama
}{
	{"tiny", Tiny},
	{"deep", Deep},
	{"other", Other},
}

// File is one file of a model's directory: its name there and its bytes.
type File struct {
	Name string
	Data []byte
}

// Files builds m's directory: its files in order of name, the same bytes
// for the same m.
func (m Llama) Files() ([]File, error) {
	if m.Layers <= 0 || m.Hidden <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 ||
		m.FFN <= 0 || m.Context <= 0 || m.Heads%m.KVHeads != 0 {
		return nil, fmt.Errorf("hfmodel: bad shape %+v", m)
	}
	weights, err := writeSafetensors(m.tensors())
	if err != nil {
		return nil, err
	}
	files := []File{{Name: "model.safetensors", Data: weights}}
	for _, j := range []struct {
		name string
		v    any
	}{
		{"config.json", m.config()},
		{"generation_config.json", generationConfig{BOS: EndOfText, EOS: IMEnd, Transformers: transformersVersion}},
		{"special_tokens_map.json", newSpecialTokensMap()},
		{"tokenizer.json", tokenizerJSON()},
		{"tokenizer_config.json", m.tokenizerConfig()},
	} {
		b, err := marshal(j.v)
		if err != nil {
			return nil, fmt.Errorf("hfmodel: %s: %w", j.name, err)
		}
		files = append(files, File{Name: j.name, Data: b})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// transformersVersion is the transformers_version the JSON files claim,
// a release that reads them.
const transformersVersion = "4.56.0"

// config is config.json, in the order of its fields (transformers writes
// its keys sorted; so does this).
type config struct {
	Architectures         []string    `json:"architectures"`
	AttentionBias         bool        `json:"attention_bias"`
	AttentionDropout      json.Number `json:"attention_dropout"`
	BOSTokenID            int         `json:"bos_token_id"`
	EOSTokenID            int         `json:"eos_token_id"`
	HeadDim               int         `json:"head_dim"`
	HiddenAct             string      `json:"hidden_act"`
	HiddenSize            int         `json:"hidden_size"`
	InitializerRange      json.Number `json:"initializer_range"`
	IntermediateSize      int         `json:"intermediate_size"`
	MaxPositionEmbeddings int         `json:"max_position_embeddings"`
	MLPBias               bool        `json:"mlp_bias"`
	ModelType             string      `json:"model_type"`
	NumAttentionHeads     int         `json:"num_attention_heads"`
	NumHiddenLayers       int         `json:"num_hidden_layers"`
	NumKeyValueHeads      int         `json:"num_key_value_heads"`
	PretrainingTP         int         `json:"pretraining_tp"`
	RMSNormEps            json.Number `json:"rms_norm_eps"`
	RopeScaling           *struct{}   `json:"rope_scaling"` // null
	RopeTheta             json.Number `json:"rope_theta"`
	TieWordEmbeddings     bool        `json:"tie_word_embeddings"`
	TorchDtype            string      `json:"torch_dtype"`
	TransformersVersion   string      `json:"transformers_version"`
	UseCache              bool        `json:"use_cache"`
	VocabSize             int         `json:"vocab_size"`
}

// config is m's config.json. The floats are json.Numbers so that they read
// as floats in Python ("10000.0", not 10000).
func (m Llama) config() config {
	return config{
		Architectures:         []string{"LlamaForCausalLM"},
		AttentionDropout:      "0.0",
		BOSTokenID:            EndOfText,
		EOSTokenID:            IMEnd,
		HeadDim:               m.HeadDim,
		HiddenAct:             "silu",
		HiddenSize:            m.Hidden,
		InitializerRange:      "0.02",
		IntermediateSize:      m.FFN,
		MaxPositionEmbeddings: m.Context,
		ModelType:             "llama",
		NumAttentionHeads:     m.Heads,
		NumHiddenLayers:       m.Layers,
		NumKeyValueHeads:      m.KVHeads,
		PretrainingTP:         1,
		RMSNormEps:            "1e-06",
		RopeTheta:             "10000.0",
		TorchDtype:            "bfloat16",
		TransformersVersion:   transformersVersion,
		UseCache:              true,
		VocabSize:             VocabSize,
	}
}

// generationConfig is generation_config.json: the special tokens only. It
// sets no sampling default (temperature, top_p, …) on purpose: vLLM takes
// a model's generation config as its requests' defaults, and the tests
// want the server's own.
type generationConfig struct {
	BOS          int    `json:"bos_token_id"`
	EOS          int    `json:"eos_token_id"`
	Transformers string `json:"transformers_version"`
}

// marshal is v as indented JSON with a final newline, "<" and ">" left
// as they are (the special tokens are easier to read so).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// headScale multiplies lm_head's printable rows (see tensors).
const headScale = 16

// tensors are m's weights with the names of transformers' LlamaForCausalLM,
// in the order the module builds them, filled from one PCG stream seeded
// by m.Seed: the norms 1, every matrix normal with standard deviation
// 1/sqrt(fan_in) (which keeps the activations' scale through the layers),
// lm_head's rows zeroed as Printable says.
func (m Llama) tensors() []tensor {
	rng := rand.New(rand.NewPCG(m.Seed, 0))
	h, q, kv := m.Hidden, m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	var ts []tensor
	normal := func(out, in int) []float32 {
		v := make([]float32, out*in)
		std := 1 / math.Sqrt(float64(in))
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
		return v
	}
	matrix := func(name string, out, in int) {
		ts = append(ts, bf16Tensor(name, []int{out, in}, normal(out, in)))
	}
	ones := func(name string) {
		v := make([]float32, h)
		for i := range v {
			v[i] = 1
		}
		ts = append(ts, bf16Tensor(name, []int{h}, v))
	}
	matrix("model.embed_tokens.weight", VocabSize, h)
	for l := range m.Layers {
		b := fmt.Sprintf("model.layers.%d.", l)
		ones(b + "input_layernorm.weight")
		matrix(b+"self_attn.q_proj.weight", q, h)
		matrix(b+"self_attn.k_proj.weight", kv, h)
		matrix(b+"self_attn.v_proj.weight", kv, h)
		matrix(b+"self_attn.o_proj.weight", h, q)
		ones(b + "post_attention_layernorm.weight")
		matrix(b+"mlp.gate_proj.weight", m.FFN, h)
		matrix(b+"mlp.up_proj.weight", m.FFN, h)
		matrix(b+"mlp.down_proj.weight", h, m.FFN)
	}
	ones("model.norm.weight")
	// The output projection: a token's logit is its row's dot product with
	// the final (normed) hidden state, so a zero row's logit is exactly 0
	// whatever the input. Every row but Printable's is zero: the special
	// tokens (EOS among them), the other byte tokens and the rows past the
	// tokenizer's 259 tokens. The 95 printable rows are scaled by
	// headScale, so their logits are about normal with standard deviation
	// headScale (the normed state has norm sqrt(hidden)): the greatest is
	// positive but with probability 2^-95, and about 2.5 × headScale = 40,
	// so greedy decoding writes printable ASCII, one character per token,
	// and never EOS, and so does sampling at vLLM's default temperature 1
	// (the 225 zero rows together weigh about 225·e^-40 of the mass): a
	// server's default sampling streams whole tokens to max_tokens too.
	head := normal(VocabSize, h)
	for tok := range VocabSize {
		row := head[tok*h : (tok+1)*h]
		if !Printable(tok) {
			clear(row)
			continue
		}
		for i := range row {
			row[i] *= headScale
		}
	}
	ts = append(ts, bf16Tensor("lm_head.weight", []int{VocabSize, h}, head))
	return ts
}
