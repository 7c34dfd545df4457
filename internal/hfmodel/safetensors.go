package hfmodel

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// tensor is one tensor of a safetensors file: its shape in row-major
// order (PyTorch's) and its elements in BF16, little endian.
type tensor struct {
	name  string
	shape []int
	data  []byte
}

// bf16Tensor is v, of the given shape, in BF16.
func bf16Tensor(name string, shape []int, v []float32) tensor {
	d := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(d[2*i:], BFloat16(x))
	}
	return tensor{name: name, shape: shape, data: d}
}

// writeSafetensors is the safetensors file of ts
// (github.com/huggingface/safetensors): the header's length N as a
// little-endian uint64, the header (N bytes of JSON, padded with spaces to
// a multiple of 8: "__metadata__" then each tensor's dtype, shape and
// data_offsets, by name), then the tensors' data in the same order, with
// no gaps; the offsets count from the end of the header.
func writeSafetensors(ts []tensor) ([]byte, error) {
	ts = append([]tensor(nil), ts...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].name < ts[j].name })
	var h bytes.Buffer
	h.WriteString(`{"__metadata__":{"format":"pt"}`)
	var off int
	for i, t := range ts {
		if i > 0 && ts[i-1].name == t.name {
			return nil, fmt.Errorf("hfmodel: tensor %q twice", t.name)
		}
		n := 1
		for _, d := range t.shape {
			n *= d
		}
		if len(t.data) != 2*n {
			return nil, fmt.Errorf("hfmodel: tensor %q: %d bytes for shape %v, want %d", t.name, len(t.data), t.shape, 2*n)
		}
		name, err := json.Marshal(t.name)
		if err != nil {
			return nil, err
		}
		shape, err := json.Marshal(t.shape)
		if err != nil {
			return nil, err
		}
		h.WriteByte(',')
		h.Write(name)
		h.WriteString(`:{"dtype":"BF16","shape":`)
		h.Write(shape)
		h.WriteString(`,"data_offsets":[` + strconv.Itoa(off) + "," + strconv.Itoa(off+len(t.data)) + "]}")
		off += len(t.data)
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	out := make([]byte, 8, 8+h.Len()+off)
	binary.LittleEndian.PutUint64(out, uint64(h.Len()))
	out = append(out, h.Bytes()...)
	for _, t := range ts {
		out = append(out, t.data...)
	}
	return out, nil
}

// BFloat16 is v as a bfloat16 (the top half of a float32), rounded to
// nearest even; a NaN stays a NaN.
func BFloat16(v float32) uint16 {
	b := math.Float32bits(v)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1 // may carry into the exponent, up to infinity, which is right
	return uint16(b >> 16)
}
