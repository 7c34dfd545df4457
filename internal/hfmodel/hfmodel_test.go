package hfmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"
	"unicode/utf8"
)

// TestModelDigests pins the bytes of every file of every model genmodels
// writes, so that every CI run serves vLLM the same models. A change here
// is a change of the models: say why in the commit.
func TestModelDigests(t *testing.T) {
	want := map[string]string{
		"tiny/config.json":              "6faca01ab5720b485669bcf52485217f240a14b68ae2ea145f7338e013eeaa68",
		"tiny/generation_config.json":   "3fc7d4afd7843464f525dbdb837e460c2c26add830466c952e6fc58e0e66d121",
		"tiny/model.safetensors":        "264f87195f81250fbce1cffbdf6be84f34762f3056e5c72e157e93070fab58fb",
		"tiny/special_tokens_map.json":  "15a0f5e4794254849609694a4de53c0a629ff5950ec0d69012acb59b3d900a32",
		"tiny/tokenizer.json":           "4cae14e6904a0fc4a852cde08e93ed7ada5160fc05e187d8697dac65b00e2957",
		"tiny/tokenizer_config.json":    "d68befeda67f27b6a7373f4b9b8784ac58f90bdd979469c8b97448df4f87988d",
		"deep/config.json":              "783077b4ca1458301be1b86ea1ff15fefe88105d0c9602b6707f9f7821e659ac",
		"deep/generation_config.json":   "3fc7d4afd7843464f525dbdb837e460c2c26add830466c952e6fc58e0e66d121",
		"deep/model.safetensors":        "8034354a67ac94cb94ed6343f6e8869aff4a8c3f02f275f609f1e4db9ad9d41c",
		"deep/special_tokens_map.json":  "15a0f5e4794254849609694a4de53c0a629ff5950ec0d69012acb59b3d900a32",
		"deep/tokenizer.json":           "4cae14e6904a0fc4a852cde08e93ed7ada5160fc05e187d8697dac65b00e2957",
		"deep/tokenizer_config.json":    "d68befeda67f27b6a7373f4b9b8784ac58f90bdd979469c8b97448df4f87988d",
		"other/config.json":             "6faca01ab5720b485669bcf52485217f240a14b68ae2ea145f7338e013eeaa68",
		"other/generation_config.json":  "3fc7d4afd7843464f525dbdb837e460c2c26add830466c952e6fc58e0e66d121",
		"other/model.safetensors":       "092667aed244eb333fee83f239d11f01147cba5ee4ce2471e95ed57a7984ce40",
		"other/special_tokens_map.json": "15a0f5e4794254849609694a4de53c0a629ff5950ec0d69012acb59b3d900a32",
		"other/tokenizer.json":          "4cae14e6904a0fc4a852cde08e93ed7ada5160fc05e187d8697dac65b00e2957",
		"other/tokenizer_config.json":   "d68befeda67f27b6a7373f4b9b8784ac58f90bdd979469c8b97448df4f87988d",
	}
	got := map[string]string{}
	for _, m := range Models {
		files, err := m.Model.Files()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			sum := sha256.Sum256(f.Data)
			got[m.Dir+"/"+f.Name] = hex.EncodeToString(sum[:])
		}
	}
	if !reflect.DeepEqual(got, want) {
		var b bytes.Buffer
		for _, k := range slices.Sorted(maps.Keys(got)) {
			fmt.Fprintf(&b, "\t\t%q: %q,\n", k, got[k])
		}
		t.Errorf("the models' files changed: if that is meant (say why in the commit), replace want in TestModelDigests by\n%s"+
			"and regenerate the models the tests use (go run ./internal/hfmodel/genmodels -out DIR)", b.String())
	}
}

// TestFilesAreStable: building a model twice gives the same bytes.
func TestFilesAreStable(t *testing.T) {
	for _, m := range Models {
		a, err := m.Model.Files()
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Model.Files()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two builds differ", m.Dir)
		}
	}
}

// TestModelsDiffer: other is tiny's shape with other weights, deep is
// tiny with more layers.
func TestModelsDiffer(t *testing.T) {
	if Deep.Layers <= Tiny.Layers {
		t.Errorf("deep has %d layers, tiny %d: want more", Deep.Layers, Tiny.Layers)
	}
	o, s, d := Other, Tiny, Deep
	o.Seed, o.Name, s.Name, d.Name, d.Layers = 0, "", "", "", 0
	s.Seed = 0
	if o != s {
		t.Errorf("other's shape %+v differs from tiny's %+v", o, s)
	}
	if s.Seed, s.Layers = Tiny.Seed, 0; d != s {
		t.Errorf("deep %+v differs from tiny %+v in more than its layers", d, s)
	}
	if Other.Seed == Tiny.Seed {
		t.Error("other has tiny's seed")
	}
}

// safetensor is one entry of a safetensors header.
type safetensor struct {
	Dtype   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// readSafetensors parses b's header and returns its tensors and data.
func readSafetensors(t *testing.T, b []byte) (map[string]safetensor, []byte) {
	t.Helper()
	if len(b) < 8 {
		t.Fatalf("%d bytes: no header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n%8 != 0 || uint64(len(b)-8) < n {
		t.Fatalf("header of %d bytes in a file of %d: want a multiple of 8 within the file", n, len(b))
	}
	header := b[8 : 8+n]
	if header[0] != '{' {
		t.Fatalf("header starts %q", header[:1])
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		t.Fatalf("header: %v", err)
	}
	var meta map[string]string
	if err := json.Unmarshal(raw["__metadata__"], &meta); err != nil || meta["format"] != "pt" {
		t.Errorf("__metadata__ %s (%v), want format pt", raw["__metadata__"], err)
	}
	delete(raw, "__metadata__")
	ts := map[string]safetensor{}
	for name, r := range raw {
		var st safetensor
		dec := json.NewDecoder(bytes.NewReader(r))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&st); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ts[name] = st
	}
	return ts, b[8+n:]
}

// TestSafetensors: the header parses back, names every tensor of
// transformers' LlamaForCausalLM for the model's layers in its shape, and
// its offsets cover the data in order with no gap, 2 bytes an element.
func TestSafetensors(t *testing.T) {
	for _, m := range Models {
		t.Run(m.Dir, func(t *testing.T) {
			m := m.Model
			h, q, kv := m.Hidden, m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
			want := map[string][]int{
				"model.embed_tokens.weight": {VocabSize, h},
				"model.norm.weight":         {h},
				"lm_head.weight":            {VocabSize, h},
			}
			for l := range m.Layers {
				b := fmt.Sprintf("model.layers.%d.", l)
				want[b+"input_layernorm.weight"] = []int{h}
				want[b+"post_attention_layernorm.weight"] = []int{h}
				want[b+"self_attn.q_proj.weight"] = []int{q, h}
				want[b+"self_attn.k_proj.weight"] = []int{kv, h}
				want[b+"self_attn.v_proj.weight"] = []int{kv, h}
				want[b+"self_attn.o_proj.weight"] = []int{h, q}
				want[b+"mlp.gate_proj.weight"] = []int{m.FFN, h}
				want[b+"mlp.up_proj.weight"] = []int{m.FFN, h}
				want[b+"mlp.down_proj.weight"] = []int{h, m.FFN}
			}
			ts, data := readSafetensors(t, file(t, m, "model.safetensors"))
			got := map[string][]int{}
			for name, st := range ts {
				got[name] = st.Shape
				if st.Dtype != "BF16" {
					t.Errorf("%s: dtype %s", name, st.Dtype)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tensors\n got %v\nwant %v", got, want)
			}
			names := make([]string, 0, len(ts))
			for name := range ts {
				names = append(names, name)
			}
			sort.Slice(names, func(i, j int) bool { return ts[names[i]].Offsets[0] < ts[names[j]].Offsets[0] })
			if !sort.StringsAreSorted(names) {
				t.Errorf("the data is not in order of name: %v", names)
			}
			var end int64
			for _, name := range names {
				st := ts[name]
				n := int64(2)
				for _, d := range st.Shape {
					n *= int64(d)
				}
				if st.Offsets != [2]int64{end, end + n} {
					t.Errorf("%s: data_offsets %v, want [%d %d]", name, st.Offsets, end, end+n)
				}
				end = st.Offsets[1]
			}
			if end != int64(len(data)) {
				t.Errorf("the tensors end at %d, the data at %d", end, len(data))
			}
			norm := ts["model.norm.weight"].Offsets
			for i := norm[0]; i < norm[1]; i += 2 {
				if v := binary.LittleEndian.Uint16(data[i:]); v != 0x3f80 {
					t.Fatalf("model.norm.weight has %#04x, want 1 (0x3f80)", v)
				}
			}
		})
	}
}

// TestLMHeadRows: lm_head's rows are zero but for the printable ASCII
// bytes', which are not, and the embeddings have no zero row.
func TestLMHeadRows(t *testing.T) {
	for _, m := range Models {
		t.Run(m.Dir, func(t *testing.T) {
			ts, data := readSafetensors(t, file(t, m.Model, "model.safetensors"))
			row := 2 * m.Model.Hidden
			for _, c := range []struct {
				name    string
				tensor  string
				zeroRow func(tok int) bool
				norm    float64 // a non-zero row's expected squared norm
			}{
				{name: "lm_head", tensor: "lm_head.weight", zeroRow: func(tok int) bool { return !Printable(tok) }, norm: headScale * headScale},
				{name: "embeddings", tensor: "model.embed_tokens.weight", zeroRow: func(int) bool { return false }, norm: 1},
			} {
				w := data[ts[c.tensor].Offsets[0]:ts[c.tensor].Offsets[1]]
				zeros := 0
				for tok := range VocabSize {
					r := w[tok*row : (tok+1)*row]
					var sq float64
					for i := 0; i < len(r); i += 2 {
						v := math.Float32frombits(uint32(binary.LittleEndian.Uint16(r[i:])) << 16)
						sq += float64(v) * float64(v)
					}
					if zero := sq == 0; zero != c.zeroRow(tok) {
						t.Errorf("%s: row %d (%q) zero is %v", c.name, tok, tokenText(tok), zero)
					} else if !zero && (sq < 0.5*c.norm || sq > 1.5*c.norm) {
						t.Errorf("%s: row %d has squared norm %.3f, want about %g", c.name, tok, sq, c.norm)
					}
					if sq == 0 {
						zeros++
					}
				}
				if c.name == "lm_head" && zeros != VocabSize-95 {
					t.Errorf("%s: %d zero rows, want %d", c.name, zeros, VocabSize-95)
				}
			}
		})
	}
}

func tokenText(tok int) string {
	if v := Vocab(); tok < len(v) {
		return v[tok]
	}
	return "padding"
}

// TestTokenizer: tokenizer.json's vocabulary maps every byte b to token b
// through GPT-2's byte-level characters, then the special tokens, also its
// added tokens; a text's bytes map to characters and back exactly.
func TestTokenizer(t *testing.T) {
	var tok struct {
		AddedTokens []addedToken `json:"added_tokens"`
		Model       struct {
			Type   string         `json:"type"`
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
		PreTokenizer  map[string]any `json:"pre_tokenizer"`
		Decoder       map[string]any `json:"decoder"`
		PostProcessor any            `json:"post_processor"`
	}
	if err := json.Unmarshal(file(t, Tiny, "tokenizer.json"), &tok); err != nil {
		t.Fatal(err)
	}
	if tok.Model.Type != "BPE" || tok.Model.Merges == nil || len(tok.Model.Merges) != 0 {
		t.Errorf("model %s with merges %v, want BPE with none", tok.Model.Type, tok.Model.Merges)
	}
	if tok.PreTokenizer["type"] != "ByteLevel" || tok.PreTokenizer["use_regex"] != false || tok.PreTokenizer["add_prefix_space"] != false {
		t.Errorf("pre_tokenizer %v", tok.PreTokenizer)
	}
	if tok.Decoder["type"] != "ByteLevel" || tok.PostProcessor != nil {
		t.Errorf("decoder %v, post_processor %v", tok.Decoder, tok.PostProcessor)
	}
	if len(tok.Model.Vocab) != 256+len(specials) {
		t.Errorf("%d tokens, want %d", len(tok.Model.Vocab), 256+len(specials))
	}
	char := map[rune]byte{}
	for b := range 256 {
		c := ByteChar(byte(b))
		if id, ok := tok.Model.Vocab[string(c)]; !ok || id != b {
			t.Errorf("byte %#02x: character %q is token %d (%v), want %d", b, c, id, ok, b)
		}
		if Printable(b) && b != ' ' && c != rune(b) {
			t.Errorf("byte %q is character %q, want itself", rune(b), c)
		}
		char[c] = byte(b)
	}
	if len(char) != 256 {
		t.Errorf("%d distinct characters for 256 bytes", len(char))
	}
	want := []addedToken{
		{ID: 256, Content: "<|endoftext|>", Special: true},
		{ID: 257, Content: "<|im_start|>", Special: true},
		{ID: 258, Content: "<|im_end|>", Special: true},
	}
	if !reflect.DeepEqual(tok.AddedTokens, want) {
		t.Errorf("added_tokens %+v, want %+v", tok.AddedTokens, want)
	}
	for _, a := range want {
		if id := tok.Model.Vocab[a.Content]; id != a.ID {
			t.Errorf("%s is token %d, want %d", a.Content, id, a.ID)
		}
	}
	for _, c := range []struct{ name, text string }{
		{name: "ascii", text: "Hello, world!"},
		{name: "accents and CJK", text: "Hello, wörld! 日本"},
		{name: "controls", text: "\x00\t\n\r\x7f"},
		{name: "invalid utf-8", text: "\xff\xfe\x80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var chars []rune
			var ids []int
			for _, b := range []byte(c.text) {
				chars = append(chars, ByteChar(b))
				ids = append(ids, tok.Model.Vocab[string(ByteChar(b))])
			}
			var back []byte
			for _, r := range string(chars) {
				back = append(back, char[r])
			}
			if string(back) != c.text {
				t.Errorf("%q → %q → %q", c.text, string(chars), back)
			}
			if len(ids) != len(c.text) || !utf8.ValidString(string(chars)) {
				t.Errorf("%q: %d tokens for %d bytes", c.text, len(ids), len(c.text))
			}
			for i, id := range ids {
				if id != int(c.text[i]) {
					t.Errorf("%q: token %d is %d, want byte %d", c.text, i, id, c.text[i])
				}
			}
		})
	}
}

// TestConfigs: what config.json, generation_config.json and
// tokenizer_config.json say, read back as Python would.
func TestConfigs(t *testing.T) {
	for _, c := range []struct {
		name  string
		model Llama
		file  string
		want  map[string]any
	}{
		{name: "tiny config", model: Tiny, file: "config.json", want: map[string]any{
			"architectures": []any{"LlamaForCausalLM"}, "model_type": "llama",
			"hidden_size": 256.0, "intermediate_size": 768.0, "num_hidden_layers": 2.0,
			"num_attention_heads": 4.0, "num_key_value_heads": 4.0, "head_dim": 64.0,
			"vocab_size": 320.0, "max_position_embeddings": 32768.0, "rms_norm_eps": 1e-6,
			"rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": false,
			"torch_dtype": "bfloat16", "bos_token_id": 256.0, "eos_token_id": 258.0,
			"attention_bias": false, "mlp_bias": false,
		}},
		{name: "deep config", model: Deep, file: "config.json", want: map[string]any{"num_hidden_layers": 8.0}},
		{name: "generation config", model: Tiny, file: "generation_config.json", want: map[string]any{
			"bos_token_id": 256.0, "eos_token_id": 258.0, "transformers_version": transformersVersion,
		}},
		{name: "tokenizer config", model: Tiny, file: "tokenizer_config.json", want: map[string]any{
			"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
			"bos_token": "<|endoftext|>", "unk_token": nil, "add_bos_token": false, "model_max_length": 32768.0,
			"chat_template": ChatTemplate, "clean_up_tokenization_spaces": false,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := file(t, c.model, c.file)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range c.want {
				if v, ok := got[k]; !ok || !reflect.DeepEqual(v, want) {
					t.Errorf("%s = %#v (%v), want %#v", k, v, ok, want)
				}
			}
			if c.file == "generation_config.json" && len(got) != len(c.want) {
				t.Errorf("%s has %v: want no sampling defaults", c.file, got)
			}
			if c.file == "config.json" && !bytes.Contains(b, []byte(`"rope_theta": 10000.0,`)) {
				t.Errorf("rope_theta is not written as a float:\n%s", b)
			}
		})
	}
}

// TestChatTemplateIsGGUFs: the template is internal/gguf's (copied, not
// imported).
func TestChatTemplateIsGGUFs(t *testing.T) {
	const gguf = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
	if ChatTemplate != gguf {
		t.Errorf("ChatTemplate %q, want gguf's %q", ChatTemplate, gguf)
	}
}

func TestBFloat16(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float32
		want uint16
	}{
		{name: "zero", v: 0, want: 0},
		{name: "one", v: 1, want: 0x3f80},
		{name: "minus two", v: -2, want: 0xc000},
		{name: "tenth", v: 0.1, want: 0x3dcd},
		{name: "tie to even, down", v: math.Float32frombits(0x3f808000), want: 0x3f80},
		{name: "tie to even, up", v: math.Float32frombits(0x3f818000), want: 0x3f82},
		{name: "above the tie", v: math.Float32frombits(0x3f808001), want: 0x3f81},
		{name: "overflow", v: math.MaxFloat32, want: 0x7f80},
		{name: "infinity", v: float32(math.Inf(-1)), want: 0xff80},
	} {
		if got := BFloat16(c.v); got != c.want {
			t.Errorf("%s: BFloat16(%g) = %#04x, want %#04x", c.name, c.v, got, c.want)
		}
	}
	if got := BFloat16(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Errorf("BFloat16(NaN) = %#04x", got)
	}
	if got := BFloat16(math.Float32frombits(0x7f800001)); got&0x7f == 0 {
		t.Errorf("BFloat16 of a NaN with low mantissa bits = %#04x, an infinity", got)
	}
}

func TestFilesRejectsBadShapes(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Llama)
	}{
		{name: "no layers", edit: func(m *Llama) { m.Layers = 0 }},
		{name: "kv heads divide no heads", edit: func(m *Llama) { m.KVHeads = 3 }},
		{name: "no head dim", edit: func(m *Llama) { m.HeadDim = 0 }},
	} {
		m := Tiny
		c.edit(&m)
		if _, err := m.Files(); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// file is m's file name.
func file(t *testing.T, m Llama, name string) []byte {
	t.Helper()
	files, err := m.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name == name {
			return f.Data
		}
	}
	t.Fatalf("%s has no %s", m.Name, name)
	return nil
}
