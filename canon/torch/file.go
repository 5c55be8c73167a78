// Package torch reads PyTorch checkpoints and NumPy files without Python and without running
// anything in them: the zip format of torch.save (<prefix>/data.pkl with its storages under
// <prefix>/data/), the legacy format before it (five pickles, then the raw storages), bare pickles,
// and NumPy's .npy and .npz. Formats are recognised by content, never by name; TorchScript and
// other zip archives are named, not parsed.
//
// Formats are tried in torch.load's order (dispatch.go): a zip by its first bytes, then the tar
// format as Python's tarfile opens it, then pickles; an archive's records are found as PyTorch's
// miniz finds them, case-insensitively (zipnames.go), and names that collide are an error.
//
// Every pickle is read by package pickle's restricted machine, which never imports or calls
// anything. The verdict is that of PyTorch's torch.load(weights_only=True): a file is valid when
// every global its pickles name is in PyTorch's weights-only allowlist and every opcode and
// operation is one that unpickler accepts. Where torch.load reads only data.pkl, this package
// scans every pickle in an archive, so a hostile pickle beside data.pkl makes a file invalid too.
// For a bare pickle (which torch.load itself does not read) the verdict is the weights-only
// unpickler's on it; for NumPy files it is numpy.load(allow_pickle=False)'s, with the pickles of
// object arrays scanned as well.
//
// Tensors are listed from torch._utils' rebuild functions (_rebuild_tensor_v2 and its kin):
// name, dtype in safetensors' names, shape, stride, storage and where the bytes are in the file.
// Listing never reads storage bytes; every count and length is checked against the file before
// anything is allocated.
//
// Most callers do not use this package directly: canon.Read calls Read for a file Sniff recognises.
package torch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/pickle"
)

// Format names what a file is.
type Format string

// The formats Read recognises.
const (
	FormatZip         Format = "pytorch-zip"    // torch.save since PyTorch 1.6
	FormatLegacy      Format = "pytorch-legacy" // torch.save before 1.6 (or _use_new_zipfile_serialization=False)
	FormatTar         Format = "pytorch-tar"    // torch.save's first format: named, not parsed
	FormatPickle      Format = "pickle"         // a bare pickle
	FormatNPY         Format = "npy"
	FormatNPZ         Format = "npz"
	FormatTorchScript Format = "torchscript" // torch.jit.save: named, not parsed
	FormatArchive     Format = "zip"         // another zip archive: named, not parsed
)

// Limits.
const (
	// MaxDepth is how deep the object tree is walked for tensors.
	MaxDepth = 256
	// MaxInflate is the most bytes a compressed pickle or header is inflated to.
	MaxInflate = 256 << 20
	// MaxEntries is the most entries a zip archive may have.
	MaxEntries = 1 << 20
	// MaxDims is the most dimensions a tensor may have.
	MaxDims = 64
)

// Tensor is one tensor as the pickle describes it.
type Tensor struct {
	// Name is the dotted path of dict keys (and list indices) that leads to it.
	Name  string  `json:"name"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	// Stride in elements; Contiguous when it is row-major for Shape.
	Stride     []int64 `json:"stride"`
	Contiguous bool    `json:"contiguous"`
	// Storage is the storage key; StorageOffset the offset into it in elements.
	Storage       string `json:"storage"`
	StorageOffset int64  `json:"storage_offset"`
	// Offset is the file offset of the tensor's first element, -1 where the storage is compressed
	// or missing; Size is the number of bytes of the storage it covers.
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
	// BigEndian says its bytes in the file are big-endian (a .pt whose byteorder is "big", an .npy
	// of descr '>f4'…); Data gives them little-endian.
	BigEndian bool `json:"big_endian,omitempty"`
	// Aliases are the other tensors that share its storage (tied weights).
	Aliases []string `json:"aliases,omitempty"`
}

// Storage is one storage: a run of elements that tensors view.
type Storage struct {
	Key   string `json:"key"`
	DType string `json:"dtype"`
	// Numel is its element count (from the file where the file says it, else from the pickle).
	Numel int64 `json:"numel"`
	// Offset is the file offset of its first byte, -1 when compressed or missing; Entry the zip
	// entry that holds it.
	Offset     int64  `json:"offset"`
	Size       int64  `json:"size"`
	Entry      string `json:"entry,omitempty"`
	Compressed bool   `json:"compressed,omitempty"`

	// a compressed storage's entry (its deflated bytes) and where the array starts once inflated
	entryOffset, entrySize, dataStart int64
}

// Meta is a value of the checkpoint that is not a tensor (epoch, global_step, a config string).
type Meta struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// PickleInfo is one pickle of the file as the machine read it.
type PickleInfo struct {
	// Entry names the archive entry, or the pickle's place in a legacy file ("magic", "object", …).
	Entry    string
	Offset   int64
	End      int64
	Protocol int
	// WeightsOnly is the weights-only unpickler's verdict on this pickle.
	WeightsOnly bool
	Globals     []pickle.GlobalRef
}

// File is what Read made of a file.
type File struct {
	Name   string
	Size   int64
	Format Format
	// Prefix is the folder of a torch.save zip archive (the file's stem when it was written).
	Prefix string
	// ByteOrder is "little" or "big" (a zip archive's byteorder record; NumPy's descr).
	ByteOrder string
	// Pickles are every pickle read, in file order.
	Pickles  []PickleInfo
	Tensors  []Tensor
	Storages []Storage
	Metadata []Meta
	Findings []finding.Finding
	// ReadErr is the first error reading the file (other than its end): the file could not be read,
	// and the findings say nothing about it.
	ReadErr error

	// budget is what reading the file may keep: its pickles' objects, inflated entries, the names
	// and values listed (see budgetFor).
	budget *pickle.Budget
	// listBudget is what the names and values listed may take (see listBudgetFor).
	listBudget *pickle.Budget
}

// Budget: reading a file keeps at most baseBudget bytes plus budgetPerByte for each byte of the file
// (pickle objects, inflated pickles and headers, tensor names and values), so memory follows the
// bytes present, not the sizes the file claims.
const (
	baseBudget    = 40 << 20
	budgetPerByte = 16
)

// listBudgetFor is what the tensor names, aliases and values listed may take: a few times the file's
// size, so a small file whose memo shares long keys along many paths lists a few of them, not
// gigabytes of names.
func listBudgetFor(size int64) *pickle.Budget {
	return &pickle.Budget{Left: 8<<20 + 4*min(max(size, 0), 1<<60)}
}

func budgetFor(size int64) *pickle.Budget {
	if size > (1<<62)/budgetPerByte {
		return &pickle.Budget{Left: 1 << 62}
	}
	return &pickle.Budget{Left: baseBudget + budgetPerByte*max(size, 0)}
}

// Valid reports whether torch.load(weights_only=True) (for NumPy: numpy.load(allow_pickle=False))
// accepts the file, as far as stdiff can tell: no finding has severity error.
func (f *File) Valid() bool { return f.Verdict() == nil }

// Verdict returns the first error finding, the reason the file is invalid, or nil.
func (f *File) Verdict() *finding.Finding {
	for i := range f.Findings {
		if f.Findings[i].Severity == finding.SevError {
			return &f.Findings[i]
		}
	}
	return nil
}

func (f *File) add(code string, sev finding.Severity, off int64, entry, format string, args ...any) *finding.Finding {
	f.Findings = append(f.Findings, finding.Finding{Code: code, Severity: sev, Offset: off, Entry: entry, Message: fmt.Sprintf(format, args...)})
	return &f.Findings[len(f.Findings)-1]
}

const hintUnsafe = "do not load this file with pickle or torch.load(weights_only=False); if you trust it, convert it to safetensors in a sandbox"

// scanPickle runs the machine on a pickle at [off, limit) of r and records it and its findings.
// base is added to the offsets of findings (for pickles inflated from a compressed entry, -1
// makes every offset -1).
func (f *File) scanPickle(r io.ReaderAt, off, limit int64, entry string, compressed bool) (*pickle.Pickle, error) {
	p, err := pickle.ReadBudget(r, off, limit, f.budget)
	fix := func(o int64) int64 {
		if compressed {
			return -1
		}
		return o
	}
	where := "the pickle"
	switch {
	case strings.HasSuffix(strings.ToLower(entry), ".pkl"), strings.HasSuffix(entry, ".npy"):
		where = entry
	case entry != "":
		where = "the " + entry + " pickle"
	}
	info := PickleInfo{Entry: entry, Offset: fix(off), End: fix(p.End), Protocol: p.Protocol, WeightsOnly: err == nil && p.WeightsOnly(), Globals: p.Globals}
	f.Pickles = append(f.Pickles, info)
	for _, g := range p.Globals {
		switch g.Class {
		case pickle.Unsafe:
			x := f.add(finding.CodeUnsafeGlobal, finding.SevError, fix(g.Offset), entry, "%s names %s, which runs code or reaches the system", where, g.FullName())
			x.Global, x.Hint = g.FullName(), hintUnsafe
		case pickle.Unknown:
			x := f.add(finding.CodeUnknownGlobal, finding.SevError, fix(g.Offset), entry, "%s names %s, which is outside PyTorch's weights-only allowlist", where, g.FullName())
			x.Global = g.FullName()
			x.Hint = "torch.load(weights_only=True) refuses it; load it only if you trust the file"
		}
	}
	for _, o := range p.Opcodes {
		f.add(finding.CodeUnsupportedOpcode, finding.SevError, fix(o.Offset), entry, "%s uses opcode %s, which the weights-only unpickler does not accept", where, pickle.OpName(o.Op))
	}
	for _, o := range p.Rejections {
		f.add(finding.CodeRefusedOperation, finding.SevError, fix(o.Offset), entry, "the weights-only unpickler refuses %s in %s", o.Msg, where)
	}
	if err != nil {
		off := int64(-1)
		msg := err.Error()
		if fe, ok := err.(*pickle.FormatError); ok {
			off, msg = fe.Offset, fe.Msg+" (opcode "+pickle.OpName(fe.Op)+")"
		}
		f.add(finding.CodeMalformedPickle, finding.SevError, fix(off), entry, "%s is malformed: %s", where, msg)
		return nil, err
	}
	return p, nil
}

// Sniff names the format of a file from its first bytes, in torch.load's order: zip, then tar
// (which needs the first 512 bytes), then NumPy, the legacy format and a pickle that starts with
// its PROTO opcode. ok is false for anything else. Sniff cannot tell a torch.save zip from
// TorchScript, an .npz or another archive: Read can.
func Sniff(head []byte) (format Format, ok bool) {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return FormatZip, true
	case isTar(head):
		return FormatTar, true
	case bytes.HasPrefix(head, []byte("\x93NUMPY")):
		return FormatNPY, true
	case bytes.HasPrefix(head, legacyMagic):
		return FormatLegacy, true
	case len(head) >= 2 && head[0] == 0x80 && head[1] <= 5:
		return FormatPickle, true
	}
	return "", false
}

// Candidate reports whether a file that starts with head (8 bytes are enough) may be one Read
// reads: Sniff recognises it, or it starts as a pickle of protocol 0 or 1 may (with any opcode that
// pushes a value or a mark: GLOBAL, MARK, NONE, INT, UNICODE, …), which SniffReader then decides
// by reading it.
func Candidate(head []byte) bool {
	if _, ok := Sniff(head); ok {
		return true
	}
	return len(head) > 0 && strings.IndexByte(pickleStart, head[0]) >= 0
}

// sniffWindow is how much of a file SniffReader reads to recognise a pickle of protocol 0 or 1.
const sniffWindow = 64 << 10

// SniffReader names the format of the file of size bytes r holds, as Sniff does (reading the first
// 512 bytes, which a tar header needs), and recognises a pickle of protocol 0 or 1 (which has no
// PROTO opcode) by reading it: one that reaches its STOP within the first 64 KiB, or whose opcodes
// are well formed up to the end of those 64 KiB (a first pickle longer than that), is FormatLegacy
// or FormatPickle.
func SniffReader(r io.ReaderAt, size int64) (Format, bool) {
	head := make([]byte, min(size, 512))
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	if f, ok := Sniff(head); ok {
		return f, true
	}
	if !Candidate(head) {
		return "", false
	}
	p, err := pickle.Read(r, 0, min(size, sniffWindow))
	if err != nil {
		if size > sniffWindow && errors.Is(err, io.ErrUnexpectedEOF) {
			return FormatPickle, true // well formed up to the window's end
		}
		return "", false
	}
	if p.Root.Kind == pickle.Int && p.Root.BigInt == legacyMagicNumber {
		return FormatLegacy, true
	}
	return FormatPickle, true
}

// legacyMagic is how torch.save's legacy format begins: PROTO 2, then the magic number
// 0x1950a86a20f9469cfc6c as a LONG1.
var legacyMagic = []byte("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")

// Read reads the file of size bytes that r holds. It always returns a File: what could not be read
// is a finding.
func Read(r io.ReaderAt, size int64, name string) *File {
	f := &File{Name: name, Size: size, budget: budgetFor(size), listBudget: listBudgetFor(size)}
	head := make([]byte, min(size, 512))
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	if size == 0 {
		f.add(finding.CodeEmptyFile, finding.SevError, 0, "", "the file is empty")
		return f
	}
	f.dispatch(r, head)
	f.link()
	return f
}

// link finds tensors that share a storage and notes them.
func (f *File) link() {
	by := map[string][]int{}
	for i, t := range f.Tensors {
		if t.Storage != "" {
			by[t.Storage] = append(by[t.Storage], i)
		}
	}
	keys := make([]string, 0, len(by))
	for k, ts := range by {
		if len(ts) > 1 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return by[keys[i]][0] < by[keys[j]][0] })
	for _, k := range keys {
		ts := by[k]
		names := make([]string, len(ts))
		for i, ti := range ts {
			names[i] = f.Tensors[ti].Name
		}
		// Every tensor names every other (by index: names may repeat): n² aliases, within the
		// list budget, so a storage that thousands of views share costs what the file allows.
		for _, ti := range ts {
			if !f.listBudget.Spend(16 * int64(len(ts))) {
				f.add(finding.CodeTreeTooLarge, finding.SevWarning, -1, "", "%d tensors share storage %s: stdiff lists their aliases only within its budget", len(ts), k)
				break
			}
			for _, tj := range ts {
				if tj != ti {
					f.Tensors[ti].Aliases = append(f.Tensors[ti].Aliases, f.Tensors[tj].Name)
				}
			}
		}
		shown := names
		more := ""
		if len(shown) > 8 {
			shown, more = shown[:8], fmt.Sprintf(" and %d more", len(names)-8)
		}
		f.add(finding.CodeSharedStorage, finding.SevInfo, f.Tensors[ts[0]].Offset, "", "tensors %s%s share storage %s (tied weights)", strings.Join(shown, ", "), more, k)
	}
}
