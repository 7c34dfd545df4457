package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// evalContext builds the context every spec expression is evaluated in:
// the functions and, when vars is not cty.NilVal, the `var` object.
func (l *loader) evalContext(vars cty.Value) *hcl.EvalContext {
	ctx := &hcl.EvalContext{Functions: l.functions()}
	if vars != cty.NilVal {
		ctx.Variables = map[string]cty.Value{rootVar: vars}
	}
	return ctx
}

// functions is the function table of a spec: env, file and the basics of
// the cty standard library (the names terraform users know).
func (l *loader) functions() map[string]function.Function {
	return map[string]function.Function{
		"env":  l.envFunc(),
		"file": l.fileFunc(),

		"try": tryfunc.TryFunc,
		"can": tryfunc.CanFunc,

		"abs":        stdlib.AbsoluteFunc,
		"ceil":       stdlib.CeilFunc,
		"floor":      stdlib.FloorFunc,
		"log":        stdlib.LogFunc,
		"max":        stdlib.MaxFunc,
		"min":        stdlib.MinFunc,
		"pow":        stdlib.PowFunc,
		"signum":     stdlib.SignumFunc,
		"parseint":   stdlib.ParseIntFunc,
		"format":     stdlib.FormatFunc,
		"formatlist": stdlib.FormatListFunc,
		"upper":      stdlib.UpperFunc,
		"lower":      stdlib.LowerFunc,
		"title":      stdlib.TitleFunc,
		"trimspace":  stdlib.TrimSpaceFunc,
		"trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc,
		"split":      stdlib.SplitFunc,
		"join":       stdlib.JoinFunc,
		"replace":    stdlib.ReplaceFunc,
		"regex":      stdlib.RegexFunc,
		"strlen":     stdlib.StrlenFunc,
		"substr":     stdlib.SubstrFunc,
		"length":     stdlib.LengthFunc,
		"coalesce":   stdlib.CoalesceFunc,
		"concat":     stdlib.ConcatFunc,
		"contains":   stdlib.ContainsFunc,
		"distinct":   stdlib.DistinctFunc,
		"element":    stdlib.ElementFunc,
		"flatten":    stdlib.FlattenFunc,
		"keys":       stdlib.KeysFunc,
		"values":     stdlib.ValuesFunc,
		"lookup":     stdlib.LookupFunc,
		"merge":      stdlib.MergeFunc,
		"range":      stdlib.RangeFunc,
		"reverse":    stdlib.ReverseListFunc,
		"slice":      stdlib.SliceFunc,
		"sort":       stdlib.SortFunc,
		"zipmap":     stdlib.ZipmapFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"jsondecode": stdlib.JSONDecodeFunc,
		"tostring":   stdlib.MakeToFunc(cty.String),
		"tonumber":   stdlib.MakeToFunc(cty.Number),
		"tobool":     stdlib.MakeToFunc(cty.Bool),
		"alltrue":    allTrueFunc,
		"anytrue":    anyTrueFunc,
	}
}

// envFunc is env(name): the value of an environment variable. An unset
// variable is an error, so a typo never silently becomes ""; write
// try(env("NAME"), "fallback") for an optional one.
func (l *loader) envFunc() function.Function {
	lookup := l.opts.LookupEnv
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "name", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			v, ok := lookup(name)
			if !ok {
				return cty.NilVal, function.NewArgErrorf(0, "environment variable %q is not set; for an optional one write try(env(%q), \"fallback\")", name, name)
			}
			return cty.StringVal(v), nil
		},
	})
}

// fileFunc is file(path): the contents of a file, relative to the spec's
// folder. Paths that leave that folder (.., absolute paths elsewhere,
// symlinks out) are refused so a spec cannot read arbitrary files.
func (l *loader) fileFunc() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			p := args[0].AsString()
			full, err := l.insideDir(p)
			if err != nil {
				return cty.NilVal, function.NewArgError(0, err)
			}
			b, err := os.ReadFile(full)
			if err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "cannot read %q: %s", p, err)
			}
			return cty.StringVal(string(b)), nil
		},
	})
}

func (l *loader) insideDir(p string) (string, error) {
	dir, err := filepath.Abs(l.dir)
	if err != nil {
		return "", err
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, p)
	}
	outside := fmt.Errorf("%q is outside the spec's folder %s; file() reads only files beside the spec", p, l.dir)
	if !within(dir, full) {
		return "", outside
	}
	// Resolve symlinks on both sides so a link cannot lead out.
	rdir, err1 := filepath.EvalSymlinks(dir)
	rfull, err2 := filepath.EvalSymlinks(full)
	if err1 == nil && err2 == nil && !within(rdir, rfull) {
		return "", outside
	}
	return full, nil
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// allTrueFunc and anyTrueFunc are not in cty's stdlib; conditions over many
// cells need them, e.g. alltrue([for c in [1, 2, 4] : decode["8K"][c].total_tps > 100]).
var (
	allTrueFunc = boolReduce(true)
	anyTrueFunc = boolReduce(false)
)

func boolReduce(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				if !v.IsKnown() {
					return cty.UnknownVal(cty.Bool), nil
				}
				if v.IsNull() {
					return cty.NilVal, fmt.Errorf("the list holds a null value")
				}
				if v.True() != all {
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}
