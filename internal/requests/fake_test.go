package requests

import (
	"context"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Special token IDs of the fake tokenizer, where Qwen's vocabulary has them.
const (
	imStart = 151644
	imEnd   = 151645
	// ordinaryIDs is the size of the fake's ordinary vocabulary (IDs
	// 100 … 100+ordinaryIDs-1), below the special tokens.
	ordinaryIDs = 150000
)

// fakeTokenizer imitates a Qwen-style server's /tokenize: a ChatML chat
// template (Qwen3's empty think block when enable_thinking is false) and a
// tokenizer that makes one token of each run of up to maxRun letters (with
// the space before it), each digit and each other byte; the ChatML markers
// are special tokens. It counts its calls and the bytes it was sent.
type fakeTokenizer struct {
	// maxRun is the longest letter run one token covers (default 6).
	maxRun int
	// perPiece > 1 makes each piece that many tokens, so that most counts
	// cannot be reached exactly.
	perPiece int

	chatCalls, textCalls int
	bytesSent            int
}

func (f *fakeTokenizer) render(messages []openai.ChatCompletionMessage, addGenerationPrompt bool, kwargs map[string]any) string {
	var b strings.Builder
	for _, m := range messages {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
		if v, ok := kwargs["enable_thinking"]; ok && v == false {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String()
}

func (f *fakeTokenizer) TokenizeChat(ctx context.Context, messages []openai.ChatCompletionMessage, addGenerationPrompt bool, kwargs map[string]any) ([]int, error) {
	f.chatCalls++
	text := f.render(messages, addGenerationPrompt, kwargs)
	f.bytesSent += len(text)
	return f.tokenize(text, true), nil
}

func (f *fakeTokenizer) TokenizeText(ctx context.Context, text string) ([]int, error) {
	f.textCalls++
	f.bytesSent += len(text)
	return f.tokenize(text, false), nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// pieceID hashes a piece into the ordinary range (FNV-1a).
func pieceID(s string) int {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return 100 + int(h%ordinaryIDs)
}

func (f *fakeTokenizer) tokenize(text string, specials bool) []int {
	maxRun, per := f.maxRun, f.perPiece
	if maxRun == 0 {
		maxRun = 6
	}
	if per == 0 {
		per = 1
	}
	ids := make([]int, 0, len(text)/3)
	emit := func(id int) {
		for range per {
			ids = append(ids, id)
		}
	}
	for i := 0; i < len(text); {
		if specials && text[i] == '<' {
			if strings.HasPrefix(text[i:], "<|im_start|>") {
				ids = append(ids, imStart)
				i += len("<|im_start|>")
				continue
			}
			if strings.HasPrefix(text[i:], "<|im_end|>") {
				ids = append(ids, imEnd)
				i += len("<|im_end|>")
				continue
			}
		}
		j := i
		if text[j] == ' ' && j+1 < len(text) && isLetter(text[j+1]) {
			j++
		}
		if isLetter(text[j]) {
			end := j
			for end < len(text) && isLetter(text[end]) && end-j < maxRun {
				end++
			}
			emit(pieceID(text[i:end]))
			i = end
			continue
		}
		emit(pieceID(text[i : i+1]))
		i++
	}
	return ids
}
