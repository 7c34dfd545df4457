package hfmodel

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The vocabulary: token b < 256 is byte b, then the special tokens, then
// padding rows up to VocabSize that the weights have and the tokenizer
// does not.
const (
	EndOfText = 256 // "<|endoftext|>": BOS and padding
	IMStart   = 257 // "<|im_start|>": ChatML's opening of a message
	IMEnd     = 258 // "<|im_end|>": ChatML's close of a message, EOS
	// VocabSize is config.json's vocab_size: the 259 tokens padded to a
	// multiple of 64, as real models pad theirs.
	VocabSize = 320
)

// specials are the tokens after the bytes, from EndOfText on.
var specials = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}

// ChatTemplate is tokenizer_config.json's chat_template: ChatML, the text
// of internal/gguf's ChatTemplate (copied: the two model formats share
// nothing else).
const ChatTemplate = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// byteChars is GPT-2's bytes_to_unicode: the printable bytes of Latin-1
// ('!'…'~', '¡'…'¬', '®'…'ÿ') stand for themselves, the others, in order,
// for U+0100 on ('Ā' for 0x00, 'Ġ' for the space 0x20, …).
var byteChars = func() (c [256]rune) {
	n := rune(0)
	for b := range 256 {
		if '!' <= b && b <= '~' || '¡' <= b && b <= '¬' || '®' <= b && b <= 'ÿ' {
			c[b] = rune(b)
		} else {
			c[b] = 256 + n
			n++
		}
	}
	return c
}()

// ByteChar is the character of byte b in the byte-level vocabulary (GPT-2's
// bytes_to_unicode), which is token b's text in tokenizer.json.
func ByteChar(b byte) rune { return byteChars[b] }

// Vocab is the tokenizer's tokens by id: the 256 byte characters, then
// the special tokens (259 in all; VocabSize pads the weights past them).
func Vocab() []string {
	v := make([]string, 0, 256+len(specials))
	for _, c := range byteChars {
		v = append(v, string(c))
	}
	return append(v, specials...)
}

// Printable reports whether token tok is a printable ASCII byte
// (' '…'~'), the only tokens whose lm_head rows are not zero.
func Printable(tok int) bool { return 0x20 <= tok && tok <= 0x7e }

// tokenizerFile is tokenizer.json, the tokenizers library's format, keys
// in its order: a BPE model with no merges over the byte-level characters,
// so that the ByteLevel pre-tokenizer (without its regex split) turns any
// text into one token per UTF-8 byte and the ByteLevel decoder turns the
// tokens back into the same bytes. The special tokens are added tokens,
// matched in the text before it.
type tokenizerFile struct {
	Version       string       `json:"version"`
	Truncation    *struct{}    `json:"truncation"`
	Padding       *struct{}    `json:"padding"`
	AddedTokens   []addedToken `json:"added_tokens"`
	Normalizer    *struct{}    `json:"normalizer"`
	PreTokenizer  byteLevel    `json:"pre_tokenizer"`
	PostProcessor *struct{}    `json:"post_processor"` // null: no BOS added
	Decoder       byteLevel    `json:"decoder"`
	Model         bpe          `json:"model"`
}

type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type byteLevel struct {
	Type           string `json:"type"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	TrimOffsets    bool   `json:"trim_offsets"`
	UseRegex       bool   `json:"use_regex"`
}

type bpe struct {
	Type                    string    `json:"type"`
	Dropout                 *float64  `json:"dropout"`
	UnkToken                *string   `json:"unk_token"`
	ContinuingSubwordPrefix *string   `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string   `json:"end_of_word_suffix"`
	FuseUnk                 bool      `json:"fuse_unk"`
	ByteFallback            bool      `json:"byte_fallback"`
	IgnoreMerges            bool      `json:"ignore_merges"`
	Vocab                   vocabJSON `json:"vocab"`
	Merges                  []string  `json:"merges"`
}

// vocabJSON is the tokens as a JSON object from token to id, in order of
// id (as the tokenizers library writes it), not of Go's sorted map keys.
type vocabJSON []string

// MarshalJSON writes the object.
func (v vocabJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for id, tok := range v {
		if id > 0 {
			b.WriteByte(',')
		}
		k, err := marshalString(tok)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(id))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalString is s as a JSON string, '<', '>' and '&' unescaped.
func marshalString(s string) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func tokenizerJSON() tokenizerFile {
	f := tokenizerFile{
		Version:      "1.0",
		PreTokenizer: byteLevel{Type: "ByteLevel", AddPrefixSpace: false, TrimOffsets: true, UseRegex: false},
		Decoder:      byteLevel{Type: "ByteLevel", AddPrefixSpace: true, TrimOffsets: true, UseRegex: true},
		Model:        bpe{Type: "BPE", Vocab: Vocab(), Merges: []string{}},
	}
	for i, s := range specials {
		f.AddedTokens = append(f.AddedTokens, addedToken{ID: EndOfText + i, Content: s, Special: true})
	}
	return f
}

// tokenizerConfig is tokenizer_config.json, keys sorted as transformers
// writes them: the generic fast tokenizer over tokenizer.json, no BOS or
// EOS added to a text, ChatML's template, and no clean-up of spaces on
// decoding (which would break the exact round trip).
type tokenizerConfig struct {
	AddBOSToken               bool                    `json:"add_bos_token"`
	AddEOSToken               bool                    `json:"add_eos_token"`
	AddedTokensDecoder        map[string]addedDecoder `json:"added_tokens_decoder"` // by id, which sort as numbers
	BOSToken                  string                  `json:"bos_token"`
	ChatTemplate              string                  `json:"chat_template"`
	CleanUpTokenizationSpaces bool                    `json:"clean_up_tokenization_spaces"`
	EOSToken                  string                  `json:"eos_token"`
	ModelMaxLength            int                     `json:"model_max_length"`
	PadToken                  string                  `json:"pad_token"`
	TokenizerClass            string                  `json:"tokenizer_class"`
	UnkToken                  *string                 `json:"unk_token"`
}

type addedDecoder struct {
	Content    string `json:"content"`
	LStrip     bool   `json:"lstrip"`
	Normalized bool   `json:"normalized"`
	RStrip     bool   `json:"rstrip"`
	SingleWord bool   `json:"single_word"`
	Special    bool   `json:"special"`
}

func (m Llama) tokenizerConfig() tokenizerConfig {
	c := tokenizerConfig{
		AddedTokensDecoder: map[string]addedDecoder{},
		BOSToken:           specials[EndOfText-256],
		ChatTemplate:       ChatTemplate,
		EOSToken:           specials[IMEnd-256],
		ModelMaxLength:     m.Context,
		PadToken:           specials[EndOfText-256],
		TokenizerClass:     "PreTrainedTokenizerFast",
	}
	for i, s := range specials {
		c.AddedTokensDecoder[strconv.Itoa(EndOfText+i)] = addedDecoder{Content: s, Special: true}
	}
	return c
}

// specialTokensMap is special_tokens_map.json.
type specialTokensMap struct {
	BOSToken string `json:"bos_token"`
	EOSToken string `json:"eos_token"`
	PadToken string `json:"pad_token"`
}

func newSpecialTokensMap() specialTokensMap {
	return specialTokensMap{BOSToken: specials[EndOfText-256], EOSToken: specials[IMEnd-256], PadToken: specials[EndOfText-256]}
}
