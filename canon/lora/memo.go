package lora

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stdiff/stdiff/canon"
)

// tensorFacts are what fromTensors sets from a survey: a pure function of the model's tensor names and
// shapes, in file order, and of which metadata keys have the value "<embed>" (what survey reads, and
// nothing else).
type tensorFacts struct {
	kind    Kind
	naming  Naming
	family  Family
	rank    int
	hasRank bool
	ranks   []int
	tokens  []string
}

// surveyKey identifies what a survey reads of a model: a 64-bit hash of the tensors' names and shapes
// in order (each name hashed on its own, its shape's length and dimensions mixed in one by one, so
// that no two different lists hash alike but by chance) and of the keys marked "<embed>"; with the
// count of tensors and of name bytes besides.
type surveyKey struct {
	hash           uint64
	tensors, bytes int
}

// maxMemo is how many surveys' facts the memo keeps: a collection's files repeat a few layouts (a
// trainer's LoRAs of one base model have the same tensors) thousands of times.
const maxMemo = 1024

// memo holds the facts of the layouts surveyed lately, by their key.
var memo struct {
	sync.Mutex
	seed  maphash.Seed
	facts map[surveyKey]*tensorFacts
	off   atomic.Bool // for tests: survey every model
}

func init() { memo.seed = maphash.MakeSeed() }

// keyOf is the key of what survey reads of m.
func keyOf(m *canon.Model) surveyKey {
	k := surveyKey{tensors: len(m.Tensors)}
	acc := step(maphash.String(memo.seed, ""), uint64(len(m.Tensors)))
	for i := range m.Tensors {
		t := &m.Tensors[i]
		k.bytes += len(t.Name)
		x := step(maphash.String(memo.seed, t.Name), uint64(len(t.Shape)))
		for _, d := range t.Shape {
			x = step(x, d)
		}
		acc = step(acc, x)
	}
	for _, e := range m.Metadata {
		if e.Value == "<embed>" {
			acc = step(acc, ^maphash.String(memo.seed, e.Key))
		}
	}
	k.hash = acc
	return k
}

// step mixes v into the hash h (of a random seed: a file cannot choose the value that loses it): the
// two halves of the 128-bit product of h xor v and a constant, each first xored with a constant
// (wyhash's mixing), xored together.
func step(h, v uint64) uint64 {
	hi, lo := bits.Mul64(h^v^0xa0761d6478bd642f, 0xe7037ed1a0b428db)
	return hi ^ lo
}

// factsOf is survey's facts of m, from the memo when a model of the same names, shapes and marks was
// surveyed lately. The facts hold no part of m (their tokens are copies): they outlive its header.
func factsOf(m *canon.Model) *tensorFacts {
	if memo.off.Load() {
		return surveyFacts(m)
	}
	k := keyOf(m)
	memo.Lock()
	f := memo.facts[k]
	memo.Unlock()
	if f != nil {
		return f
	}
	f = surveyFacts(m)
	for i, t := range f.tokens {
		f.tokens[i] = strings.Clone(t)
	}
	memo.Lock()
	if memo.facts == nil || len(memo.facts) >= maxMemo {
		memo.facts = make(map[surveyKey]*tensorFacts, 16)
	}
	memo.facts[k] = f
	memo.Unlock()
	return f
}

// surveyFacts surveys m's tensors.
func surveyFacts(m *canon.Model) *tensorFacts {
	sv := surveys.Get().(*survey)
	defer sv.release()
	sv.survey(m)
	ad := sv.adapter()
	f := &tensorFacts{tokens: sv.marked}
	if sv.tokensOnly() {
		f.tokens = append(f.tokens, sv.angled...)
	}
	f.kind = sv.kind(&ad)
	f.naming = sv.naming(f.kind)
	f.family = sv.family(f.kind)
	if len(ad.ranks) > 0 {
		f.rank, f.hasRank = mostCommonInt(ad.ranks), true
		if len(ad.ranks) > 1 {
			for r := range ad.ranks {
				f.ranks = append(f.ranks, r)
			}
			slices.Sort(f.ranks)
		}
	}
	return f
}

// fromTensors works out what a model really is from its tensor names and shapes (and, for
// lora_diffusion's tokens, the metadata that marks them): its kind, the naming scheme, the base family
// (where the shapes tell), the adapter rank and the tokens it carries.
func (in *Info) fromTensors(m *canon.Model) {
	f := factsOf(m)
	in.EmbeddedTokens = slices.Clone(f.tokens)
	in.Kind, in.Naming, in.Family = f.kind, f.naming, f.family
	in.Sources["kind"], in.Sources["naming"], in.Sources["family"] = "tensors", "tensors", "tensors"
	if f.hasRank {
		in.Rank = f.rank
		in.Sources["rank"] = "tensors"
		in.Ranks = slices.Clone(f.ranks)
	}
}
