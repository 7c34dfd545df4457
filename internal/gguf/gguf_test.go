package gguf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"reflect"
	"testing"
)

// TestModelDigests pins the bytes of every model genmodels writes, so
// that every CI run serves llama.cpp the same files. A change here is a
// change of the models: say why in the commit.
func TestModelDigests(t *testing.T) {
	want := map[string]string{
		"tiny.gguf":  "35a57f8033145cfaac5cbe8c52ebe8801f68b3851024e90227baa5af6b8be64c",
		"deep.gguf":  "feccecb9cf7c187707fd556149b374364262f552fd9007f77e9e295d072b5a5c",
		"other.gguf": "56c36e3ececad5a79073e025836c521a8582c1e7d02acadcfb434f847c72e6df",
	}
	for _, m := range Models {
		f, err := m.Model.File()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := f.WriteTo(h)
		if err != nil {
			t.Fatal(err)
		}
		got := hex.EncodeToString(h.Sum(nil))
		t.Logf("%s: %d bytes, sha256 %s", m.File, n, got)
		if got != want[m.File] {
			t.Errorf("%s: sha256 %s, want %s", m.File, got, want[m.File])
		}
	}
}

// TestModelsDiffer: other.gguf is tiny's shape with other weights, deep is
// three times as many layers.
func TestModelsDiffer(t *testing.T) {
	if Deep.Layers != 3*Tiny.Layers {
		t.Errorf("deep has %d layers, tiny %d: want three times as many", Deep.Layers, Tiny.Layers)
	}
	o, s := Other, Tiny
	o.Seed, o.Name, s.Name = 0, "", ""
	s.Seed = 0
	if o != s {
		t.Errorf("other's shape %+v differs from tiny's %+v", o, s)
	}
	if Other.Seed == Tiny.Seed {
		t.Error("other has tiny's seed")
	}
	if Tiny.Width/Tiny.Heads%32 != 0 {
		t.Errorf("head size %d: the quantized KV types' block of 32 does not divide it", Tiny.Width/Tiny.Heads)
	}
}

// TestRoundTrip writes a file of every value type and reads its header
// back.
func TestRoundTrip(t *testing.T) {
	f := &File{
		KV: []KV{
			{"u8", uint8(7)}, {"i8", int8(-7)}, {"u16", uint16(700)}, {"i16", int16(-700)},
			{"u32", uint32(70000)}, {"i32", int32(-70000)}, {"f32", float32(1.5)}, {"b", true},
			{"s", "héllo"}, {"u64", uint64(1 << 40)}, {"i64", int64(-1 << 40)}, {"f64", 2.25},
			{"general.alignment", uint32(64)},
			{"as", []string{"a", "", "▁b"}}, {"af", []float32{1, -2}}, {"ai", []int32{3, -4}}, {"ab", []bool{true, false}},
		},
		Tensors: []Tensor{
			{Name: "a", Dims: []uint64{3}, Type: F32, Data: make([]byte, 12)},
			{Name: "b", Dims: []uint64{2, 5}, Type: F16, Data: bytes.Repeat([]byte{1}, 20)},
		},
	}
	var buf bytes.Buffer
	n, err := f.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	b := buf.Bytes()
	if string(b[:4]) != "GGUF" || b[4] != 3 {
		t.Fatalf("header %q", b[:8])
	}
	h, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 3 {
		t.Errorf("version %d", h.Version)
	}
	if !reflect.DeepEqual(h.KV, f.KV) {
		t.Errorf("metadata\n got %#v\nwant %#v", h.KV, f.KV)
	}
	wantT := []TensorInfo{{"a", []uint64{3}, F32, 0}, {"b", []uint64{2, 5}, F16, 64}}
	if !reflect.DeepEqual(h.Tensors, wantT) {
		t.Errorf("tensors\n got %+v\nwant %+v", h.Tensors, wantT)
	}
	if h.DataOffset%64 != 0 {
		t.Errorf("data at %d, not aligned to 64", h.DataOffset)
	}
	if got, want := uint64(len(b)), h.DataOffset+64+64; got != want {
		t.Errorf("file of %d bytes, want %d (data at %d, two tensors padded to 64)", got, want, h.DataOffset)
	}
	if !bytes.Equal(b[h.DataOffset+64:h.DataOffset+84], f.Tensors[1].Data) {
		t.Error("tensor b's data is not at its offset")
	}
}

// TestTinyHeader: the model's header carries what llama.cpp requires of
// a llama model and a SentencePiece vocabulary, and its tensors' sizes
// add up to the file.
func TestTinyHeader(t *testing.T) {
	f, err := Tiny.File()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	h, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"general.architecture":                   "llama",
		"llama.block_count":                      uint32(4),
		"llama.embedding_length":                 uint32(256),
		"llama.attention.head_count":             uint32(8),
		"llama.rope.dimension_count":             uint32(32),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.chat_template":                ChatTemplate,
	} {
		if got, ok := h.Get(key); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v (%v), want %v", key, got, ok, want)
		}
	}
	tokens, _ := h.Get("tokenizer.ggml.tokens")
	toks := tokens.([]string)
	if toks[0] != "<unk>" || toks[1] != "<s>" || toks[2] != "</s>" || toks[5] != "<0x00>" || toks[5+0x0a] != "<0x0A>" {
		t.Errorf("tokens start %q", toks[:16])
	}
	if nv, _ := h.Get("llama.vocab_size"); nv != uint32(len(toks)) {
		t.Errorf("vocab_size %v, %d tokens", nv, len(toks))
	}
	if len(h.Tensors) != 3+9*Tiny.Layers {
		t.Errorf("%d tensors", len(h.Tensors))
	}
	last := h.Tensors[len(h.Tensors)-1]
	if got, want := uint64(buf.Len()), h.DataOffset+last.Offset+last.Dims[0]*last.Dims[1]*2; got != want {
		t.Errorf("file of %d bytes, want %d", got, want)
	}
}

func TestFloat16(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff}, {1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, {6.097555160522461e-05, 0x03ff},
		{1 + 1.0/2048, 0x3c00}, // a tie, rounded to even
		{1 + 3.0/2048, 0x3c02}, // a tie, rounded to even (up)
		{0.1, 0x2e66},
	} {
		if got := Float16(c.v); got != c.want {
			t.Errorf("Float16(%g) = %#04x, want %#04x", c.v, got, c.want)
		}
	}
	if got := Float16(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("Float16(NaN) = %#04x", got)
	}
}

func TestWriteRejects(t *testing.T) {
	for name, f := range map[string]*File{
		"short data": {Tensors: []Tensor{{Name: "x", Dims: []uint64{4}, Type: F32, Data: make([]byte, 8)}}},
		"twice":      {KV: []KV{{"k", "a"}, {"k", "b"}}},
		"type":       {KV: []KV{{"k", struct{}{}}}},
		"alignment":  {KV: []KV{{"general.alignment", uint32(3)}}},
	} {
		if _, err := f.WriteTo(&bytes.Buffer{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Read(bytes.NewReader([]byte("GGML\x03\x00\x00\x00"))); err == nil {
		t.Error("Read of a bad magic: no error")
	}
	if _, err := Read(bytes.NewReader([]byte("GGUF\x03\x00"))); err == nil {
		t.Error("Read of a truncated header: no error")
	}
}
