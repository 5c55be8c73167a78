// Package hfmap is llama.cpp's map between Hugging Face tensor names and GGUF tensor names, per
// architecture (general.architecture), as gguf-py's TensorNameMap builds it: the table in hfmap.json is
// gguf-py's constants.py and tensor_mapping.py taken as data by gen/gen.py (see Source), and this
// package builds from it the same map for any architecture in it.
//
// Names map with their suffix: "model.layers.3.self_attn.q_proj.weight" is "blk.3.attn_q.weight" in a
// llama GGUF. Tensors that convert_hf_to_gguf.py stacks (MoE experts, one tensor each in the Hugging
// Face model) map through the stacked name: see Arch.ToGGUF.
package hfmap

import (
	_ "embed"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed hfmap.json
var data []byte

type table struct {
	Source            string              `json:"source"`
	Commit            string              `json:"commit"`
	License           string              `json:"license"`
	TensorNames       map[string]string   `json:"tensor_names"`
	Mappings          []cfg               `json:"mappings"`
	BlockMappings     []cfg               `json:"block_mappings"`
	ArchBlockMappings map[string][]cfg    `json:"arch_block_mappings"`
	Archs             map[string][]string `json:"archs"`
}

// cfg is one tensor (gguf-py's MODEL_TENSOR name) and the Hugging Face names that map to it.
type cfg struct {
	Tensor string
	Keys   []string
}

func (c *cfg) UnmarshalJSON(b []byte) error {
	var raw [2]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw[0], &c.Tensor); err != nil {
		return err
	}
	return json.Unmarshal(raw[1], &c.Keys)
}

var (
	loadOnce sync.Once
	tab      table
	archs    sync.Map // name → *Arch
)

func load() *table {
	loadOnce.Do(func() {
		if err := json.Unmarshal(data, &tab); err != nil {
			panic("hfmap: hfmap.json: " + err.Error()) // embedded and tested: never happens
		}
	})
	return &tab
}

// Source says where the table came from: gguf-py's version (or, where none was recorded, the commit's short
// hash), the commit it was generated from, and gguf-py's licence line.
func Source() (source, commit, license string) {
	t := load()
	return t.Source, t.Commit, t.License
}

// Archs lists the architectures the table knows, sorted.
func Archs() []string {
	t := load()
	out := make([]string, 0, len(t.Archs))
	for a := range t.Archs {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Arch is the name map of one architecture.
type Arch struct {
	Name string
	// toGGUF maps a Hugging Face name without its suffix to a GGUF name, "{bid}" standing for the block
	// number in both (block tensors) or in neither.
	toGGUF map[string]string
	// fromGGUF lists, per GGUF name (with "{bid}"), the Hugging Face names that map to it, in the
	// table's order.
	fromGGUF map[string][]string
}

// Lookup returns the map of architecture name (a GGUF file's general.architecture), or false when
// the table does not know it.
func Lookup(name string) (*Arch, bool) {
	if a, ok := archs.Load(name); ok {
		return a.(*Arch), true
	}
	t := load()
	tensors, ok := t.Archs[name]
	if !ok {
		return nil, false
	}
	has := make(map[string]bool, len(tensors))
	for _, tn := range tensors {
		has[tn] = true
	}
	a := &Arch{Name: name, toGGUF: map[string]string{}, fromGGUF: map[string][]string{}}
	add := func(key, gguf string) {
		if old, ok := a.toGGUF[key]; ok { // a later key wins, as in a Python dict
			a.fromGGUF[old] = remove(a.fromGGUF[old], key)
		}
		a.toGGUF[key] = gguf
		a.fromGGUF[gguf] = append(a.fromGGUF[gguf], key)
	}
	for _, c := range t.Mappings {
		if !has[c.Tensor] {
			continue
		}
		g := t.TensorNames[c.Tensor]
		add(g, g)
		for _, k := range c.Keys {
			add(k, g)
		}
	}
	block := make([]cfg, 0, len(t.BlockMappings))
	override := map[string][]string{}
	for _, c := range t.ArchBlockMappings[name] {
		override[c.Tensor] = c.Keys
	}
	for _, c := range t.BlockMappings {
		if keys, ok := override[c.Tensor]; ok {
			c.Keys = keys
			delete(override, c.Tensor)
		}
		block = append(block, c)
	}
	for _, c := range t.ArchBlockMappings[name] { // tensors only the override names, after the others
		if _, ok := override[c.Tensor]; ok {
			block = append(block, c)
		}
	}
	for _, c := range block {
		if !has[c.Tensor] {
			continue
		}
		g := t.TensorNames[c.Tensor]
		add(g, g)
		for _, k := range c.Keys {
			add(k, g)
		}
	}
	v, _ := archs.LoadOrStore(name, a)
	return v.(*Arch), true
}

func remove(s []string, x string) []string {
	for i, v := range s {
		if v == x {
			return append(s[:i:i], s[i+1:]...)
		}
	}
	return s
}

// Suffixes are the suffixes a name may carry past the mapped part, as convert_hf_to_gguf.py tries them.
var Suffixes = []string{".weight", ".bias"}

// Name is a tensor name mapped: the GGUF name, and for a tensor that is one expert of a stacked MoE
// tensor, the expert's index (-1 otherwise).
type Name struct {
	GGUF   string
	Expert int
}

// ToGGUF maps a Hugging Face tensor name to its GGUF name. A name with an expert number
// (".experts.5.", as Mixtral and Qwen MoE models write one tensor per expert) maps to the stacked
// tensor that convert_hf_to_gguf.py writes, with Expert set. It returns false for a name the map
// does not know.
func (a *Arch) ToGGUF(hf string) (Name, bool) {
	if g, ok := a.lookup(hf); ok {
		return Name{GGUF: g, Expert: -1}, true
	}
	// One expert of a stacked tensor: the name without its expert number.
	if i := strings.Index(hf, ".experts."); i >= 0 {
		rest := hf[i+len(".experts."):]
		j := strings.IndexByte(rest, '.')
		if j > 0 {
			if e, err := strconv.Atoi(rest[:j]); err == nil && e >= 0 {
				if g, ok := a.lookup(hf[:i] + ".experts." + rest[j+1:]); ok {
					return Name{GGUF: g, Expert: e}, true
				}
			}
		}
	}
	return Name{}, false
}

// lookup maps a name whose suffix is one of Suffixes (or none), trying each number in it as the
// block number.
func (a *Arch) lookup(hf string) (string, bool) {
	if g, ok := a.lookupBase(hf); ok {
		return g, true
	}
	for _, s := range Suffixes {
		if base, ok := strings.CutSuffix(hf, s); ok {
			if g, ok := a.lookupBase(base); ok {
				return g + s, true
			}
		}
	}
	return "", false
}

func (a *Arch) lookupBase(name string) (string, bool) {
	if g, ok := a.toGGUF[name]; ok && !strings.Contains(g, "{bid}") {
		return g, true
	}
	// Each dot-separated run of digits in turn as {bid}.
	for i := 0; i < len(name); {
		j := i
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			j++
		}
		if j > i && (i == 0 || name[i-1] == '.') && (j == len(name) || name[j] == '.') {
			key := name[:i] + "{bid}" + name[j:]
			if g, ok := a.toGGUF[key]; ok && strings.Contains(g, "{bid}") {
				return strings.Replace(g, "{bid}", name[i:j], 1), true
			}
		}
		if j > i {
			i = j
		} else {
			i++
		}
	}
	return "", false
}

// FromGGUF lists the Hugging Face names that map to a GGUF name, in the table's order: the same
// suffix and block number, or the stacked name of experts (".experts." without a number).
func (a *Arch) FromGGUF(name string) []string {
	base, suffix := name, ""
	for _, s := range Suffixes {
		if b, ok := strings.CutSuffix(name, s); ok {
			base, suffix = b, s
			break
		}
	}
	var out []string
	if keys, ok := a.fromGGUF[base]; ok && !strings.Contains(base, "{bid}") {
		for _, k := range keys {
			out = append(out, k+suffix)
		}
	}
	// blk.N.rest: the block's names.
	if rest, ok := strings.CutPrefix(base, "blk."); ok {
		if k := strings.IndexByte(rest, '.'); k > 0 {
			bid := rest[:k]
			if _, err := strconv.Atoi(bid); err == nil {
				for _, key := range a.fromGGUF["blk.{bid}"+rest[k:]] {
					out = append(out, strings.ReplaceAll(key, "{bid}", bid)+suffix)
				}
			}
		}
	}
	return out
}
