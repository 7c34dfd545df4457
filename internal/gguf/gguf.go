// Package gguf writes and reads the header of GGUF files (version 3), the
// model format of ggml and llama.cpp: a header, key-value metadata, tensor
// infos, then the tensors' data, each aligned. It writes what
// genmodels needs for slogate's llama.cpp tests (llama.go) and reads back
// the header and metadata for tests; it neither quantizes nor loads
// tensors.
//
// The layout (ggml/src/gguf.cpp in ggml-org/llama.cpp, all little endian):
//
//	"GGUF" u32 version=3, u64 n_tensors, u64 n_kv
//	n_kv × (string key, u32 value type, value)
//	n_tensors × (string name, u32 n_dims, n_dims × u64 ne, u32 ggml type, u64 offset)
//	padding to the alignment, then each tensor's data at its offset, padded
//
// where a string is u64 length then bytes, an array is u32 element type,
// u64 count, then the elements, and an offset counts from the start of the
// data section.
package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Magic opens every GGUF file; Version is the one written.
const (
	Magic   = "GGUF"
	Version = 3
	// DefaultAlignment is the alignment of the data section and of each
	// tensor when general.alignment is absent (GGUF_DEFAULT_ALIGNMENT).
	DefaultAlignment = 32
)

// ValueType is a metadata value's type (enum gguf_type).
type ValueType uint32

// The metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

// TensorType is a tensor's element type (enum ggml_type); only the
// unquantized ones are written here.
type TensorType uint32

// The tensor types this package writes.
const (
	F32 TensorType = 0
	F16 TensorType = 1
)

// Size is the size in bytes of one element.
func (t TensorType) Size() int {
	switch t {
	case F32:
		return 4
	case F16:
		return 2
	}
	return 0
}

// KV is one metadata pair. Value is one of uint8, int8, uint16, int16,
// uint32, int32, float32, bool, string, uint64, int64, float64, or a slice
// of one of them (an array).
type KV struct {
	Key   string
	Value any
}

// Tensor is one tensor: Dims in ggml's order (ne[0] first, the fastest
// varying), Data its elements in Type, little endian.
type Tensor struct {
	Name string
	Dims []uint64
	Type TensorType
	Data []byte
}

// File is a GGUF file to write.
type File struct {
	KV      []KV
	Tensors []Tensor
}

// alignment is general.alignment if set, else DefaultAlignment.
func (f *File) alignment() (uint64, error) {
	for _, kv := range f.KV {
		if kv.Key == "general.alignment" {
			a, ok := kv.Value.(uint32)
			if !ok || a == 0 || a%8 != 0 {
				return 0, fmt.Errorf("gguf: general.alignment must be a uint32 multiple of 8, not %v", kv.Value)
			}
			return uint64(a), nil
		}
	}
	return DefaultAlignment, nil
}

func pad(n, align uint64) uint64 { return (align - n%align) % align }

// WriteTo writes f in GGUF version 3.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	align, err := f.alignment()
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: bufio.NewWriterSize(w, 1<<20)}
	e := &encoder{w: cw}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(f.Tensors)))
	e.u64(uint64(len(f.KV)))
	seen := map[string]bool{}
	for _, kv := range f.KV {
		if seen[kv.Key] {
			return cw.n, fmt.Errorf("gguf: key %q twice", kv.Key)
		}
		seen[kv.Key] = true
		e.str(kv.Key)
		if err := e.value(kv.Value, true); err != nil {
			return cw.n, fmt.Errorf("gguf: key %q: %w", kv.Key, err)
		}
	}
	var offset uint64
	for _, t := range f.Tensors {
		n := uint64(1)
		for _, d := range t.Dims {
			n *= d
		}
		if t.Type.Size() == 0 {
			return cw.n, fmt.Errorf("gguf: tensor %q: unsupported type %d", t.Name, t.Type)
		}
		if want := n * uint64(t.Type.Size()); uint64(len(t.Data)) != want {
			return cw.n, fmt.Errorf("gguf: tensor %q: %d bytes of data for dims %v, want %d", t.Name, len(t.Data), t.Dims, want)
		}
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.Type))
		e.u64(offset)
		offset += uint64(len(t.Data))
		offset += pad(offset, align)
	}
	e.raw(make([]byte, pad(uint64(cw.n), align)))
	for _, t := range f.Tensors {
		e.raw(t.Data)
		e.raw(make([]byte, pad(uint64(len(t.Data)), align)))
	}
	if e.err == nil {
		e.err = cw.w.(*bufio.Writer).Flush()
	}
	return cw.n, e.err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type encoder struct {
	w   io.Writer
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(p)
	}
}
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:4], v); e.raw(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:8], v); e.raw(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.raw([]byte(s)) }

// value writes v, preceded by its type when typed.
func (e *encoder) value(v any, typed bool) error {
	tag := func(t ValueType) {
		if typed {
			e.u32(uint32(t))
		}
	}
	b := e.buf[:]
	switch v := v.(type) {
	case uint8:
		tag(TypeUint8)
		e.raw([]byte{v})
	case int8:
		tag(TypeInt8)
		e.raw([]byte{byte(v)})
	case uint16:
		tag(TypeUint16)
		binary.LittleEndian.PutUint16(b, v)
		e.raw(b[:2])
	case int16:
		tag(TypeInt16)
		binary.LittleEndian.PutUint16(b, uint16(v))
		e.raw(b[:2])
	case uint32:
		tag(TypeUint32)
		e.u32(v)
	case int32:
		tag(TypeInt32)
		e.u32(uint32(v))
	case float32:
		tag(TypeFloat32)
		e.u32(math.Float32bits(v))
	case bool:
		tag(TypeBool)
		if v {
			e.raw([]byte{1})
		} else {
			e.raw([]byte{0})
		}
	case string:
		tag(TypeString)
		e.str(v)
	case uint64:
		tag(TypeUint64)
		e.u64(v)
	case int64:
		tag(TypeInt64)
		e.u64(uint64(v))
	case float64:
		tag(TypeFloat64)
		e.u64(math.Float64bits(v))
	case []uint8:
		return array(e, TypeUint8, v)
	case []int8:
		return array(e, TypeInt8, v)
	case []uint16:
		return array(e, TypeUint16, v)
	case []int16:
		return array(e, TypeInt16, v)
	case []uint32:
		return array(e, TypeUint32, v)
	case []int32:
		return array(e, TypeInt32, v)
	case []float32:
		return array(e, TypeFloat32, v)
	case []bool:
		return array(e, TypeBool, v)
	case []string:
		return array(e, TypeString, v)
	case []uint64:
		return array(e, TypeUint64, v)
	case []int64:
		return array(e, TypeInt64, v)
	case []float64:
		return array(e, TypeFloat64, v)
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

func array[T any](e *encoder, t ValueType, vs []T) error {
	e.u32(uint32(TypeArray))
	e.u32(uint32(t))
	e.u64(uint64(len(vs)))
	for _, v := range vs {
		if err := e.value(v, false); err != nil {
			return err
		}
	}
	return nil
}

// TensorInfo is a tensor's entry in a file's header.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   TensorType
	Offset uint64 // from the start of the data section
}

// Header is what Read parses: everything before the tensors' data.
type Header struct {
	Version    uint32
	KV         []KV
	Tensors    []TensorInfo
	DataOffset uint64 // where the data section starts in the file
}

// Get returns the value of key and whether it is there.
func (h *Header) Get(key string) (any, bool) {
	for _, kv := range h.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Read parses a GGUF file's header, metadata and tensor infos, with the
// values typed as KV documents (arrays as slices).
func Read(r io.Reader) (*Header, error) {
	d := &decoder{r: bufio.NewReader(r)}
	magic := d.bytes(4)
	if d.err == nil && string(magic) != Magic {
		return nil, fmt.Errorf("gguf: bad magic %q", magic)
	}
	h := &Header{Version: d.u32()}
	if d.err == nil && h.Version != 2 && h.Version != 3 {
		return nil, fmt.Errorf("gguf: unsupported version %d", h.Version)
	}
	nt, nkv := d.u64(), d.u64()
	if d.err == nil && (nt > 1<<20 || nkv > 1<<20) {
		return nil, fmt.Errorf("gguf: implausible counts: %d tensors, %d keys", nt, nkv)
	}
	for i := uint64(0); i < nkv && d.err == nil; i++ {
		k := d.str()
		v := d.value(ValueType(d.u32()))
		h.KV = append(h.KV, KV{k, v})
	}
	for i := uint64(0); i < nt && d.err == nil; i++ {
		ti := TensorInfo{Name: d.str()}
		n := d.u32()
		if n > 4 {
			return nil, fmt.Errorf("gguf: tensor %q has %d dimensions", ti.Name, n)
		}
		for j := uint32(0); j < n; j++ {
			ti.Dims = append(ti.Dims, d.u64())
		}
		ti.Type = TensorType(d.u32())
		ti.Offset = d.u64()
		h.Tensors = append(h.Tensors, ti)
	}
	if d.err != nil {
		return nil, fmt.Errorf("gguf: %w", d.err)
	}
	align := uint64(DefaultAlignment)
	if v, ok := h.Get("general.alignment"); ok {
		if a, ok := v.(uint32); ok && a > 0 {
			align = uint64(a)
		}
	}
	h.DataOffset = d.n + pad(d.n, align)
	return h, nil
}

type decoder struct {
	r   *bufio.Reader
	n   uint64
	err error
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > 1<<30 {
		d.err = errors.New("implausible length")
		return nil
	}
	b := make([]byte, n)
	_, d.err = io.ReadFull(d.r, b)
	d.n += n
	return b
}

// fixed reads n ≤ 8 bytes, zeros after an error.
func (d *decoder) fixed(n uint64) []byte {
	if b := d.bytes(n); b != nil {
		return b
	}
	return make([]byte, n)
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) str() string { return string(d.bytes(d.u64())) }

func (d *decoder) value(t ValueType) any {
	switch t {
	case TypeUint8:
		return d.fixed(1)[0]
	case TypeInt8:
		return int8(d.fixed(1)[0])
	case TypeUint16:
		return binary.LittleEndian.Uint16(d.fixed(2))
	case TypeInt16:
		return int16(binary.LittleEndian.Uint16(d.fixed(2)))
	case TypeUint32:
		return d.u32()
	case TypeInt32:
		return int32(d.u32())
	case TypeFloat32:
		return math.Float32frombits(d.u32())
	case TypeBool:
		return d.fixed(1)[0] != 0
	case TypeString:
		return d.str()
	case TypeUint64:
		return d.u64()
	case TypeInt64:
		return int64(d.u64())
	case TypeFloat64:
		return math.Float64frombits(d.u64())
	case TypeArray:
		et := ValueType(d.u32())
		n := d.u64()
		if n > 1<<24 {
			d.err = fmt.Errorf("implausible array length %d", n)
			return nil
		}
		return readArray(d, et, n)
	}
	if d.err == nil {
		d.err = fmt.Errorf("unknown value type %d", t)
	}
	return nil
}

func readArray(d *decoder, et ValueType, n uint64) any {
	switch et {
	case TypeUint8:
		return readSlice[uint8](d, et, n)
	case TypeInt8:
		return readSlice[int8](d, et, n)
	case TypeUint16:
		return readSlice[uint16](d, et, n)
	case TypeInt16:
		return readSlice[int16](d, et, n)
	case TypeUint32:
		return readSlice[uint32](d, et, n)
	case TypeInt32:
		return readSlice[int32](d, et, n)
	case TypeFloat32:
		return readSlice[float32](d, et, n)
	case TypeBool:
		return readSlice[bool](d, et, n)
	case TypeString:
		return readSlice[string](d, et, n)
	case TypeUint64:
		return readSlice[uint64](d, et, n)
	case TypeInt64:
		return readSlice[int64](d, et, n)
	case TypeFloat64:
		return readSlice[float64](d, et, n)
	}
	if d.err == nil {
		d.err = fmt.Errorf("unsupported array element type %d", et)
	}
	return nil
}

func readSlice[T any](d *decoder, et ValueType, n uint64) []T {
	out := make([]T, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		v, _ := d.value(et).(T)
		out = append(out, v)
	}
	return out
}
