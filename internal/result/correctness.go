package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CorrectnessFile is the file beside results.json that holds every output
// of the run's correctness blocks, one CorrectnessOutput a line
// (docs/method.md#correctness): a later run compares with these files
// alone.
const CorrectnessFile = "correctness.jsonl"

// Correctness is one `correctness "NAME"` block as measured: its settings,
// what it could not do, its cost and its figures. Its outputs, one per
// dataset line, are in correctness.jsonl (Outputs, not in results.json).
type Correctness struct {
	// Name is the block's label.
	Name string `json:"name"`
	// Dataset is the dataset file as the spec names it; Endpoint the API
	// the requests went to ("completions" or "chat").
	Dataset  string `json:"dataset"`
	Endpoint string `json:"endpoint"`
	// MaxOutput is the tokens asked for a prompt; Logprobs the top-k kept
	// at every position (0: none); Concurrency the requests in flight;
	// Seed the seed every request sends (temperature is 0).
	MaxOutput   int   `json:"max_output"`
	Logprobs    int   `json:"logprobs"`
	Concurrency int   `json:"concurrency"`
	Seed        int64 `json:"seed"`
	// Scorer is the scorer of the dataset's answers; "" when the block has
	// no accuracy check.
	Scorer string `json:"scorer,omitempty"`
	// MaxMismatch is the share of mismatches a comparison with the
	// baseline accepts; Margin the non-inferiority margin of the accuracy
	// comparison; NearTieGap the logprob gap below which a divergence
	// whose tokens are in each other's top-k is a near tie.
	MaxMismatch float64 `json:"max_mismatch"`
	Margin      float64 `json:"margin"`
	NearTieGap  float64 `json:"near_tie_gap"`
	// Prompts is the dataset's lines sent; Errors the requests that
	// failed (their outputs record the error).
	Prompts int `json:"prompts"`
	Errors  int `json:"errors,omitempty"`
	// Scored and Correct count the outputs scored against an answer and
	// those right.
	Scored  int `json:"scored,omitempty"`
	Correct int `json:"correct,omitempty"`
	// Speculative is set when the server ran with a speculative block: the
	// outputs are then those of speculative decoding.
	Speculative bool `json:"speculative,omitempty"`
	// Unavailable says what the block could not do and why, one sentence
	// each (a server that refuses logprobs: the outputs are kept, the near
	// tie rule cannot be applied).
	Unavailable []string `json:"unavailable,omitempty"`
	// UnavailableReasons are Unavailable as values (CellReason:
	// ReasonLogprobsRefused), in order; nil in files written before them,
	// which hold Unavailable alone.
	UnavailableReasons []CellReason `json:"unavailable_reasons,omitempty"`
	// Unfinished is set when the run was stopped (a signal, -timeout)
	// while the block was measured: the outputs not sent record why, and
	// a resumed run measures the block again.
	Unfinished bool `json:"unfinished,omitempty"`
	// ElapsedS is the block's wall time; GPUSeconds that time × the
	// server's GPUs: the cost of the check, apart from the speed cells'
	// (GPUTime.CellsS).
	ElapsedS   float64 `json:"elapsed_s"`
	GPUSeconds float64 `json:"gpu_seconds"`

	// Outputs are the block's outputs in dataset order, read from and
	// written to correctness.jsonl.
	Outputs []CorrectnessOutput `json:"-"`
}

// CorrectnessOutput is one line of correctness.jsonl: one prompt's greedy
// output.
type CorrectnessOutput struct {
	// Block is the correctness block's name; Line the prompt's line in the
	// dataset (1-based).
	Block string `json:"block"`
	Line  int    `json:"line"`
	// Prompt is the prompt sent (a chat prompt: its last user message).
	Prompt string `json:"prompt"`
	// Answer is the dataset line's answer, when it has one.
	Answer string `json:"answer,omitempty"`
	// Text is the output; Tokens its tokens in order, each with its
	// logprob and the top-k at its position when asked.
	Text   string  `json:"text"`
	Tokens []Token `json:"tokens"`
	// Finish is the finish reason the server gave ("length", "stop").
	Finish string `json:"finish,omitempty"`
	// Correct is the scorer's verdict, nil when not scored.
	Correct *bool `json:"correct,omitempty"`
	// Extracted is what the scorer read from the output (a regex's
	// capture, a number, a choice).
	Extracted string `json:"extracted,omitempty"`
	// Error is why the request failed; its output is then empty.
	Error string `json:"error,omitempty"`
}

// Token is one generated token: its ID when the server gives IDs (-1 when
// not), its text, its logprob and the top-k alternatives at its position.
type Token struct {
	ID      int        `json:"id"`
	Text    string     `json:"text"`
	Logprob float64    `json:"logprob"`
	Top     []TopToken `json:"top,omitempty"`
}

// TopToken is one of the top-k tokens at a position.
type TopToken struct {
	ID      int     `json:"id"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
}

// Same reports whether two tokens are the same token: by ID when both
// have one, else by text.
func (t Token) Same(id int, text string) bool {
	if t.ID >= 0 && id >= 0 {
		return t.ID == id
	}
	return t.Text == text
}

// Accuracy is Correct ÷ Scored; NaN-free: 0 when nothing was scored.
func (c *Correctness) Accuracy() float64 {
	if c.Scored == 0 {
		return 0
	}
	return float64(c.Correct) / float64(c.Scored)
}

// CorrectnessBlock returns the correctness block called name, or nil.
func (r *Results) CorrectnessBlock(name string) *Correctness {
	for i := range r.Correctness {
		if r.Correctness[i].Name == name {
			return &r.Correctness[i]
		}
	}
	return nil
}

// AppendCorrectness writes outputs as correctness.jsonl lines.
func AppendCorrectness(w io.Writer, outputs []CorrectnessOutput) error {
	var buf bytes.Buffer
	for _, o := range outputs {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteCorrectness writes every block's outputs to dir/correctness.jsonl
// (atomically); no file when r has no correctness block.
func (r *Results) WriteCorrectness(dir string) error {
	if len(r.Correctness) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, c := range r.Correctness {
		if err := AppendCorrectness(&buf, c.Outputs); err != nil {
			return err
		}
	}
	return WriteFileAtomic(filepath.Join(dir, CorrectnessFile), buf.Bytes())
}

// ReadCorrectness fills each block's Outputs from dir/correctness.jsonl.
// A missing file leaves them empty (results written before correctness
// blocks); a malformed line is an error naming it.
func (r *Results) ReadCorrectness(dir string) error {
	if len(r.Correctness) == 0 {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, CorrectnessFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	at := map[string]int{}
	for i := range r.Correctness {
		at[r.Correctness[i].Name] = i
		r.Correctness[i].Outputs = nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var o CorrectnessOutput
		if err := json.Unmarshal(b, &o); err != nil {
			return fmt.Errorf("%s line %d: not a correctness output (%v)", filepath.Join(dir, CorrectnessFile), line, err)
		}
		if i, ok := at[o.Block]; ok {
			r.Correctness[i].Outputs = append(r.Correctness[i].Outputs, o)
		}
	}
	return sc.Err()
}
