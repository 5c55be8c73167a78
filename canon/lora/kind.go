package lora

import (
	"hash/maphash"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/tensor"
)

// Kind is what a model is, from its tensors.
type Kind string

// Kinds of model. An adapter's kind is the algorithm most of its modules use.
const (
	// KindCheckpoint is a whole model (an SD checkpoint, an LLM's weights), not an adapter.
	KindCheckpoint Kind = "checkpoint"
	// KindLoRA is a low-rank adapter: a down and an up projection per module (kohya, diffusers, PEFT,
	// MLX, cloneofsimo's lora_diffusion).
	KindLoRA Kind = "lora"
	// KindLoCon is a LoRA with convolution layers (LyCORIS LoCon, kohya conv_dim).
	KindLoCon Kind = "locon"
	// KindLoHa is LyCORIS's Hadamard product of two low-rank pairs (hada_w1_a … hada_w2_b).
	KindLoHa Kind = "loha"
	// KindLoKr is LyCORIS's Kronecker product of two factors, either of them low-rank (lokr_w1 … lokr_w2_b).
	KindLoKr Kind = "lokr"
	// KindDoRA is a LoRA with a learnt magnitude per output (dora_scale, PEFT's lora_magnitude_vector).
	KindDoRA Kind = "dora"
	// KindOFT is orthogonal fine-tuning: block-diagonal rotations (kohya and LyCORIS oft_blocks of 3
	// dimensions, LyCORIS's older oft_diag, PEFT's oft_R).
	KindOFT Kind = "oft"
	// KindBOFT is butterfly OFT (LyCORIS oft_blocks of 4 dimensions, PEFT's boft_R).
	KindBOFT Kind = "boft"
	// KindIA3 scales activations (LyCORIS weight + on_input, PEFT's ia3_l).
	KindIA3 Kind = "ia3"
	// KindGLoRA is LyCORIS's generalised LoRA (a1/a2/b1/b2 per module).
	KindGLoRA Kind = "glora"
	// KindLyCORISFull stores the whole difference of every weight it changes (diff, diff_b, w_norm,
	// b_norm): LyCORIS's algo=full, or a full extraction.
	KindLyCORISFull Kind = "lycoris-full"
	// KindLyCORISDiff mixes low-rank modules with whole-weight differences or sparse bias corrections:
	// what LyCORIS's extractor writes where a layer is not worth decomposing.
	KindLyCORISDiff Kind = "lycoris-diff"
	// KindPEFTAdapter is a PEFT adapter of a method stdiff does not recognise.
	KindPEFTAdapter Kind = "peft-adapter"
	// KindTextualInversion is a set of learnt token embeddings (A1111 string_to_param / emb_params /
	// clip_l+clip_g, diffusers <token> tensors).
	KindTextualInversion Kind = "textual-inversion"
	// KindUnknown is a file whose tensors stdiff cannot name: no guess.
	KindUnknown Kind = "unknown"
)

// Naming is the scheme of a model's tensor names: which tool wrote them.
type Naming string

// Naming schemes.
const (
	// NamingKohya is kohya sd-scripts' lora_unet_… / lora_te… / oft_unet_… (also LyCORIS trained there).
	NamingKohya Naming = "kohya"
	// NamingLyCORIS is LyCORIS's own wrapper: lycoris_… (SimpleTuner and other trainers).
	NamingLyCORIS Naming = "lycoris"
	// NamingLoRADiffusion is cloneofsimo's lora_diffusion (early 2023): unet:N:up, text_encoder:N:down,
	// ranks in unet:N:rank metadata, tokens marked <embed>.
	NamingLoRADiffusion Naming = "lora-diffusion"
	NamingPEFT          Naming = "peft"
	NamingMLX           Naming = "mlx"
	NamingDiffusers     Naming = "diffusers"
	// NamingA1111 is the textual-inversion layouts the AUTOMATIC1111 web UI loads (string_to_param.*,
	// emb_params, clip_l/clip_g), whoever wrote them (kohya's trainer writes the last two).
	NamingA1111        Naming = "a1111"
	NamingLDM          Naming = "ldm" // the original Stable Diffusion checkpoints
	NamingTransformers Naming = "transformers"
	NamingUnknown      Naming = "unknown"
)

// Family is the base model family, where the tensors' names and shapes tell.
type Family string

// Base model families.
const (
	FamilySD1     Family = "sd1"
	FamilySD2     Family = "sd2"
	FamilySDXL    Family = "sdxl"
	FamilySD3     Family = "sd3"
	FamilyFlux    Family = "flux"
	FamilyLLM     Family = "llm"
	FamilyUnknown Family = "unknown"
)

// part is the part a tensor plays in an adapter module, told by the end of its name.
type part uint8

const (
	pNone part = iota
	pDown      // low-rank down projection [rank, in, …]
	pUp
	pMid       // LoCon's Tucker core (a convolution)
	pMagnitude // DoRA's magnitude
	pMLXA      // MLX lora_a [in, rank]
	pHadaW1B   // [rank, in]
	pHada      // the other LoHa factors
	pLokrW1    // [a, c]
	pLokrW1A   // [a, rank]
	pLokrW1B   // [rank, c]
	pLokrW2    // [b, d, …]
	pLokrW2A   // [b, rank], or [rank, b] with a Tucker core
	pLokrW2B   // [rank, d…]
	pLokrT2    // LoKr's Tucker core
	pLokr      // the other LoKr parts
	pOFTBlocks // kohya / LyCORIS: 3 dimensions OFT, 4 BOFT
	pOFT       // PEFT oft_R / oft_r, LyCORIS's older oft_diag
	pBOFT      // PEFT boft_R / boft_s
	pIA3
	pGLoRAA2 // [rank, in, …]
	pGLoRA   // the other GLoRA weights
	pDiff    // a whole-weight difference
	pSparse  // LyCORIS extract's sparse bias corrections
	nParts
)

// partSuffixes maps the ends of tensor names to the part they play. PEFT's adapter name (".default")
// is taken out of a name before it is matched.
var partSuffixes = []struct {
	suffix string
	p      part
}{
	{".lora_down.weight", pDown}, {".lora.down.weight", pDown}, {"_lora.down.weight", pDown}, {".lora_A.weight", pDown},
	{".lora_embedding_A", pDown}, {":down", pDown},
	{".lora_up.weight", pUp}, {".lora.up.weight", pUp}, {"_lora.up.weight", pUp}, {".lora_B.weight", pUp},
	{".lora_embedding_B", pUp}, {":up", pUp},
	{".lora_mid.weight", pMid},
	{".dora_scale", pMagnitude}, {".lora_magnitude_vector", pMagnitude}, {".lora_magnitude_vector.weight", pMagnitude},
	{".lora_a", pMLXA}, {".lora_b", pUp},
	{".hada_w1_b", pHadaW1B}, {".hada_w1_a", pHada}, {".hada_w2_a", pHada}, {".hada_w2_b", pHada}, {".hada_t1", pHada}, {".hada_t2", pHada},
	{".lokr_w1", pLokrW1}, {".lokr_w1_a", pLokrW1A}, {".lokr_w1_b", pLokrW1B},
	{".lokr_w2", pLokrW2}, {".lokr_w2_a", pLokrW2A}, {".lokr_w2_b", pLokrW2B}, {".lokr_t2", pLokrT2}, {".lokr_t1", pLokr},
	{".oft_blocks", pOFTBlocks}, {".oft_diag", pOFT}, {".oft_R.weight", pOFT}, {".oft_R", pOFT}, {".oft_r", pOFT}, {".oft_s", pOFT},
	{".boft_R", pBOFT}, {".boft_s", pBOFT},
	{".ia3_l", pIA3}, {".on_input", pIA3},
	{".a2.weight", pGLoRAA2}, {".a1.weight", pGLoRA}, {".b1.weight", pGLoRA}, {".b2.weight", pGLoRA}, {".bm.weight", pGLoRA},
	{".diff", pDiff}, {".diff_b", pDiff}, {".w_norm", pDiff}, {".b_norm", pDiff},
	{".bias_indices", pSparse}, {".bias_values", pSparse}, {".bias_size", pSparse},
}

// partIndex indexes partSuffixes, at its first use.
var partIndex = sync.OnceValue(func() *partTables {
	x := &partTables{byTail: map[string][]int{}, outdone: make([]bool, len(partSuffixes))}
	for i, s := range partSuffixes {
		t1, t2 := tails(s.suffix[1:]) // the ending's own first separator does not count
		if t2 == "" {
			t2 = t1
		}
		x.byTail[t2] = append(x.byTail[t2], i)
		n := len(s.suffix) // every ending has at least two bytes
		x.ends[pairOf(s.suffix[n-2], s.suffix[n-1])/64] |= 1 << (pairOf(s.suffix[n-2], s.suffix[n-1]) % 64)
		for _, o := range partSuffixes {
			x.outdone[i] = x.outdone[i] || len(o.suffix) > n && strings.HasSuffix(o.suffix, s.suffix)
		}
	}
	return x
})

// partTables are what splitPart and survey.part look endings up in.
type partTables struct {
	// byTail indexes partSuffixes by their last two segments ("lora_down.weight", "down.weight"), or
	// their one segment ("diff", "down"), so that a name is matched only against the endings it could have.
	byTail map[string][]int
	// ends has a bit for the last two bytes of each ending: a name whose last two have none has no
	// adapter ending.
	ends [1 << 16 / 64]uint64
	// outdone[i] is true when a longer ending ends with ending i (a name with ending i may have that one).
	outdone []bool
}

func pairOf(a, b byte) int { return int(a)<<8 | int(b) }

// tails returns a name's last segment and its last two segments ("" when it has one), segments
// being separated by '.' or ':'.
func tails(name string) (last, lastTwo string) {
	i := lastSeparator(name)
	if i < 0 {
		return name, ""
	}
	if j := lastSeparator(name[:i]); j >= 0 {
		return name[i+1:], name[j+1:]
	}
	return name[i+1:], name
}

// lastSeparator is strings.LastIndexAny(s, ".:"), without building a set of the two at each call.
func lastSeparator(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' || s[i] == ':' {
			return i
		}
	}
	return -1
}

// splitPart returns the module a tensor belongs to and the part it plays there (pNone when its name
// has no adapter ending).
func splitPart(name string) (module string, p part) {
	match := name
	if strings.Contains(match, ".default") { // PEFT's adapter name, kept by some savers
		match = strings.TrimSuffix(strings.ReplaceAll(match, ".default.", "."), ".default")
	}
	n := splitEnding(match)
	if n < 0 {
		return "", pNone
	}
	return strings.TrimSuffix(match, partSuffixes[n].suffix), partSuffixes[n].p
}

// splitEnding returns the index in partSuffixes of the ending of match (a name without PEFT's adapter
// name), -1 when it has none.
func splitEnding(match string) int {
	last, lastTwo := tails(match)
	best := -1
	for _, key := range [2]string{last, lastTwo} {
		for _, i := range partIndex().byTail[key] {
			if strings.HasSuffix(match, partSuffixes[i].suffix) && (best < 0 || len(partSuffixes[i].suffix) > len(partSuffixes[best].suffix)) {
				best = i
			}
		}
	}
	return best
}

// part is splitPart for the names of one model, one after another, faster: a name whose last two bytes
// end no ending is no part (a kohya LoRA's alphas), and the ending the last part had is tried first (a
// LoRA's modules end alike), each taken when no longer ending ends with it. FuzzPart checks it against splitPart.
func (sv *survey) part(name string) (module string, p part) {
	match := name
	// PEFT's adapter name, kept by some savers: it starts at a '.', so not before the first.
	if dot := strings.IndexByte(match, '.'); dot >= 0 && strings.Contains(match[dot:], ".default") {
		match = strings.TrimSuffix(strings.ReplaceAll(match, ".default.", "."), ".default")
	}
	x := partIndex()
	if k := len(match); k < 2 || x.ends[pairOf(match[k-2], match[k-1])/64]&(1<<(pairOf(match[k-2], match[k-1])%64)) == 0 {
		return "", pNone
	}
	for _, n := range sv.endings {
		if e := partSuffixes[n].suffix; strings.HasSuffix(match, e) && !x.outdone[n] {
			return match[:len(match)-len(e)], partSuffixes[n].p
		}
	}
	n := splitEnding(match)
	if n < 0 {
		return "", pNone
	}
	if len(sv.endings) < cap(sv.endings) {
		sv.endings = append(sv.endings, n)
	} else {
		sv.endings[n%len(sv.endings)] = n
	}
	return match[:len(match)-len(partSuffixes[n].suffix)], partSuffixes[n].p
}

// algo is the method one adapter module uses.
type algo uint8

const (
	aNone algo = iota
	aLoRA
	aDoRA
	aLoHa
	aLoKr
	aGLoRA
	aOFT
	aBOFT
	aIA3
	aFull
	nAlgos
)

// algoKinds are the kinds of a model whose modules mostly use each algorithm, in the order that breaks
// a tie.
var algoKinds = [nAlgos]Kind{aLoRA: KindLoRA, aDoRA: KindDoRA, aLoHa: KindLoHa, aLoKr: KindLoKr, aGLoRA: KindGLoRA,
	aOFT: KindOFT, aBOFT: KindBOFT, aIA3: KindIA3, aFull: KindLyCORISFull}

// module is the tensors of one adapted layer, by the part each plays.
type module struct {
	name string
	// parts holds, for each part, the index of its tensor in the model's tensors plus one (0: none).
	parts [nParts]int32
}

// has reports whether the module has a tensor for part p.
func (md *module) has(p part) bool { return md.parts[p] != 0 }

// shape is the shape of the module's tensor for part p (of ts, the model's tensors), nil when absent.
func (md *module) shape(ts []tensor.Tensor, p part) []uint64 {
	if i := md.parts[p]; i != 0 {
		return ts[i-1].Shape
	}
	return nil
}

// dim returns dimension i of a part's shape, 0 when the part or the dimension is absent.
func (md *module) dim(ts []tensor.Tensor, p part, i int) uint64 {
	if s := md.shape(ts, p); i < len(s) {
		return s[i]
	}
	return 0
}

// classify says which method a module uses, its rank (0 when it is not low-rank), the input width of
// the layer it changes (0 when unknown) and whether that layer is a spatial convolution; ts are the
// model's tensors.
func (md *module) classify(ts []tensor.Tensor) (a algo, rank int, in uint64, conv bool) {
	switch {
	case md.has(pDown):
		a, rank, in = aLoRA, int(md.dim(ts, pDown, 0)), md.dim(ts, pDown, 1)
		if md.has(pMagnitude) {
			a = aDoRA
		}
		s := md.shape(ts, pDown)
		conv = md.has(pMid) || (len(s) == 4 && (s[2] > 1 || s[3] > 1))
	case md.has(pMLXA):
		a, rank, in = aLoRA, int(md.dim(ts, pMLXA, 1)), md.dim(ts, pMLXA, 0)
	case md.has(pHadaW1B):
		a, rank, in = aLoHa, int(md.dim(ts, pHadaW1B, 0)), md.dim(ts, pHadaW1B, 1)
	case md.has(pLokrW1) || md.has(pLokrW1A) || md.has(pLokrW2) || md.has(pLokrW2A):
		a = aLoKr
		// The layer's weight is w1 ⊗ w2, w1 [a, c] and w2 [b, d]: its input width is c·d.
		c, d := md.dim(ts, pLokrW1, 1), md.dim(ts, pLokrW2, 1)
		if c == 0 {
			c = md.dim(ts, pLokrW1B, 1)
		}
		if d == 0 {
			d = md.dim(ts, pLokrW2B, 1)
		}
		in = c * d
		switch {
		case md.has(pLokrW2A) && md.has(pLokrT2):
			rank = int(md.dim(ts, pLokrW2A, 0))
		case md.has(pLokrW2A):
			rank = int(md.dim(ts, pLokrW2A, 1))
		case md.has(pLokrW1A):
			rank = int(md.dim(ts, pLokrW1A, 1))
		} // both factors whole: a full-dimension LoKr, no rank
	case md.has(pGLoRAA2):
		a, rank, in = aGLoRA, int(md.dim(ts, pGLoRAA2, 0)), md.dim(ts, pGLoRAA2, 1)
	case md.has(pOFTBlocks) && len(md.shape(ts, pOFTBlocks)) == 4, md.has(pBOFT):
		a = aBOFT
	case md.has(pOFTBlocks), md.has(pOFT):
		a = aOFT
	case md.has(pIA3):
		a = aIA3
	case md.has(pDiff):
		a = aFull
		if s := md.shape(ts, pDiff); len(s) >= 2 {
			in = s[1]
		}
	}
	return a, rank, in, conv
}

// loraDiffusionModule matches lora_diffusion's module names: <model>:<index>.
var loraDiffusionModule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_0-9]+:[0-9]+$`) })

// unetChannels are the SD UNets' channel widths; any other input width of a lora_diffusion UNet layer
// is the text encoder's context width, which tells the family.
var unetChannels = map[uint64]bool{320: true, 640: true, 1280: true}

// isA1111TI reports whether a tensor name is one of the textual-inversion layouts A1111 loads.
func isA1111TI(name string) bool {
	return name == "emb_params" || name == "clip_l" || name == "clip_g" ||
		name != "" && name[0] == 's' && strings.HasPrefix(name, "string_to_param") // the first byte rules out most names at once
}

// survey is what a model's tensors say, counted in one pass: how many names follow each naming
// scheme and name each family's layers, the adapter modules, and the learnt tokens.
type survey struct {
	nameCounts
	loraDiffusion, mlx int
	flux, sd3, llm     int
	// head is the part of the last name counted up to its first '.', and headCounts, headFlux and
	// headJoint what it says (countName).
	head                string
	headCounts          nameCounts
	headFlux, headJoint bool
	// headEnds says which words an LLM's layer name has before a '.' the head ends with (llmEnds).
	headEnds llmEnds
	// tails are what the last few parts of names from their first '.' on said (a module's tensors end
	// alike), tailNext the one to replace next.
	tails    [4]tailWords
	tailNext int
	// a1111TI counts A1111 textual-inversion tensors; loose counts tensors of no adapter module
	// (alphas, a checkpoint's weights).
	a1111TI, loose int
	tensors        int
	// contexts counts the cross-attention context widths seen (768 SD1, 1024 SD2, 2048 SDXL); tiDim is
	// the width of the last token embedding seen.
	contexts map[uint64]int
	tiDim    uint64
	// endings are the indices in partSuffixes of the last endings part found (at most 4).
	endings []int
	// ts are the model's tensors; modules the adapter modules, in the order their first tensors come,
	// found by name through slots (high 32 bits: the name's hash; low 32: index + 1; 0 is empty).
	ts      []tensor.Tensor
	modules []module
	slots   []uint64
	seed    maphash.Seed
	// marked are the tokens declared as such (lora_diffusion's <embed> metadata, bundle_emb.NAME);
	// angled the tensors named <token>, tokens only in a file of nothing else (diffusers' textual
	// inversion).
	marked, angled []string
	seenToken      map[string]bool
}

// adapter is what the survey's modules come to.
type adapter struct {
	algos                [nAlgos]int
	ranks                map[int]int
	conv, sparse, lowish int
}

// surveys keeps surveys, their tables and modules, for reuse: a collection's files are surveyed one
// after another.
var surveys = sync.Pool{New: func() any { return &survey{seed: maphash.MakeSeed()} }}

// release clears what sv holds of a model and puts it back in surveys.
func (sv *survey) release() {
	// The modules' names are parts of a header: they go. The table is cleared at its first use.
	clear(sv.modules)
	*sv = survey{modules: sv.modules[:0], slots: sv.slots[:0], seed: sv.seed, contexts: sv.contexts, endings: sv.endings[:0]}
	clear(sv.contexts)
	surveys.Put(sv)
}

// survey counts what the tensors of m say, into sv (as release left it).
func (sv *survey) survey(m *canon.Model) {
	sv.ts, sv.tensors, sv.endings = m.Tensors, len(m.Tensors), sv.endings[:0]
	if sv.endings == nil {
		sv.endings = make([]int, 0, 4)
	}
	if sv.contexts == nil {
		sv.contexts = map[uint64]int{}
	}
	var embedMarked map[string]bool
	for _, e := range m.Metadata {
		if e.Value == "<embed>" {
			if embedMarked == nil {
				embedMarked = map[string]bool{}
			}
			embedMarked[e.Key] = true
		}
	}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		sv.countName(t.Name)
		rest, bundled := "", false
		if t.Name != "" && t.Name[0] == 'b' { // the first byte rules out most names at once
			rest, bundled = strings.CutPrefix(t.Name, "bundle_emb.")
		}
		switch {
		case bundled: // a LoRA bundled with embeddings: bundle_emb.NAME.<A1111 layout>
			tok, sub, _ := strings.Cut(rest, ".")
			if isA1111TI(sub) {
				sv.token(&sv.marked, tok, t.Shape)
				if sub == "clip_g" {
					sv.sdxl++
				}
			}
		case embedMarked[t.Name]:
			sv.loraDiffusion++
			sv.token(&sv.marked, t.Name, t.Shape)
		case isA1111TI(t.Name):
			sv.a1111TI++
			sv.token(nil, "", t.Shape)
			if t.Name == "clip_g" {
				sv.sdxl++
			}
		case strings.HasPrefix(t.Name, "<") && strings.HasSuffix(t.Name, ">") && len(t.Shape) >= 1 && len(t.Shape) <= 2:
			sv.token(&sv.angled, t.Name, t.Shape)
		default:
			sv.addPart(i)
		}
	}
}

// nameCounts are what the beginnings of names say: how many follow each naming scheme, name SDXL's
// layers, and for kohya's names, SD 1.x/2.x UNet blocks (kohyaSD) and how many text encoder layers
// they show (teLayers: 12 SD 1.x, 23 SD 2.x).
type nameCounts struct {
	kohya, lycoris, peft, diffusers, ldm, hf, sdxl int
	kohyaSD, teLayers                              int
}

// add adds the counts of d.
func (c *nameCounts) add(d *nameCounts) {
	c.kohya, c.lycoris, c.peft, c.diffusers, c.ldm, c.hf, c.sdxl = c.kohya+d.kohya, c.lycoris+d.lycoris, c.peft+d.peft,
		c.diffusers+d.diffusers, c.ldm+d.ldm, c.hf+d.hf, c.sdxl+d.sdxl
	c.kohyaSD, c.teLayers = c.kohyaSD+d.kohyaSD, max(c.teLayers, d.teLayers)
}

// countNaming counts the naming scheme and the family a tensor's name shows.
func (sv *survey) countNaming(name string) {
	sv.countPrefixes(name)
	flux, joint := blocksOf(name)
	sv.countWords(flux, joint, name)
}

// countName is countNaming for the names of a model one after another: what the part of a name up
// to its first '.' says is worked out once for the names that share it (an adapter module's tensors).
// It can be: no beginning countPrefixes looks for holds a '.' after another part, and the words of
// blocksOf hold none. FuzzCountName checks it against countNaming.
func (sv *survey) countName(name string) {
	dot := strings.IndexByte(name, '.')
	if dot < 0 || dottedStem(name[:dot]) {
		sv.countNaming(name)
		return
	}
	if head := name[:dot+1]; head != sv.head {
		sv.head, sv.headCounts = head, nameCounts{}
		sv.headCounts.countPrefixes(head)
		sv.headFlux, sv.headJoint = blocksOf(head)
		sv.headEnds = llmEndsOf(name[:dot])
	}
	sv.add(&sv.headCounts)
	tail := sv.wordsOf(name[dot:])
	switch {
	case tail.flux || sv.headFlux:
		sv.flux++
	case tail.joint || sv.headJoint:
		sv.sd3++
	case tail.llm || sv.headEnds.follows(tail.s):
		// llmLayer(name), the head's '.' looked at through what the head ends with: the words before a
		// later '.' hold no '.', so they lie in the tail.
		sv.llm++
	}
}

// tailWords is what the part of a name from its first '.' on says: blocksOf's words, and llmLayer's
// at its later '.'s.
type tailWords struct {
	s                string
	flux, joint, llm bool
}

// wordsOf returns what tail says, remembered for the next few names.
func (sv *survey) wordsOf(tail string) *tailWords {
	for i := range sv.tails {
		if t := &sv.tails[i]; t.s == tail {
			return t
		}
	}
	t := &sv.tails[sv.tailNext]
	sv.tailNext = (sv.tailNext + 1) % len(sv.tails)
	t.s = tail
	t.flux, t.joint = blocksOf(tail)
	t.llm = llmLayer(tail)
	return t
}

// llmEnds says which of the words llmLayer looks for before a '.' a name's part ends with.
type llmEnds struct{ selfAttn, mlp, attn bool }

// llmEndsOf is what s ends with.
func llmEndsOf(s string) llmEnds {
	return llmEnds{strings.HasSuffix(s, "self_attn"), strings.HasSuffix(s, "mlp"), strings.HasSuffix(s, "attn")}
}

// follows reports whether after (which starts with '.') makes an LLM's layer name with a part ending
// as e says: llmLayer's test at one '.'.
func (e llmEnds) follows(after string) bool {
	c := byte(0)
	if len(after) > 1 {
		c = after[1]
	}
	return c == 'q' && e.selfAttn && strings.HasPrefix(after, ".q_proj") ||
		c == 'g' && e.mlp && strings.HasPrefix(after, ".gate_proj") ||
		c == 'c' && e.attn && strings.HasPrefix(after, ".c_attn")
}

// dottedStem reports whether s is the part before the first '.' of a beginning countPrefixes looks
// for that holds a '.'.
func dottedStem(s string) bool {
	switch s {
	case "base_model", "unet", "text_encoder", "text_encoder_2", "transformer", "model", "first_stage_model", "cond_stage_model", "lm_head", "conditioner":
		return true
	}
	return false
}

// countPrefixes counts what the beginning of a name says.
func (c *nameCounts) countPrefixes(name string) {
	switch {
	case strings.HasPrefix(name, "lora_unet_") || strings.HasPrefix(name, "lora_te") || strings.HasPrefix(name, "oft_unet_") || strings.HasPrefix(name, "oft_te"):
		c.kohya++
		if strings.HasPrefix(name, "lora_te2_") {
			c.sdxl++
		}
		if isKohyaSDBlock(name) {
			c.kohyaSD++
		}
		if layer, ok := kohyaTELayer(name); ok {
			n, _ := strconv.Atoi(layer)
			c.teLayers = max(c.teLayers, n+1)
		}
	case strings.HasPrefix(name, "lycoris_"):
		c.lycoris++
	case strings.HasPrefix(name, "base_model.model.") || strings.HasPrefix(name, "base_model."):
		c.peft++
	case strings.HasPrefix(name, "unet.") || strings.HasPrefix(name, "text_encoder.") || strings.HasPrefix(name, "text_encoder_2.") ||
		strings.HasPrefix(name, "transformer."):
		c.diffusers++
	case strings.HasPrefix(name, "model.diffusion_model.") || strings.HasPrefix(name, "first_stage_model.") || strings.HasPrefix(name, "cond_stage_model."):
		c.ldm++
	case strings.HasPrefix(name, "model.layers.") || strings.HasPrefix(name, "model.embed_tokens") || strings.HasPrefix(name, "transformer.h.") || strings.HasPrefix(name, "lm_head."):
		c.hf++
	}
	if strings.HasPrefix(name, "conditioner.embedders.1") {
		c.sdxl++
	}
}

// countWords counts the family words a name holds: flux's and SD3's blocks (as blocksOf tells), or an
// LLM's layers.
func (sv *survey) countWords(flux, joint bool, name string) {
	switch {
	case flux:
		sv.flux++
	case joint:
		sv.sd3++
	case llmLayer(name):
		sv.llm++
	}
}

// blocksOf reports whether name contains "double_blocks", "single_blocks" or
// "single_transformer_blocks" (flux), and whether it contains "joint_blocks": it looks at what
// precedes each "_blocks" rather than searching the name for every word.
func blocksOf(name string) (flux, joint bool) {
	// Each 'k' (rare in names; '_' is everywhere) that ends a "_block" followed by 's'.
	for j := 0; ; j++ {
		k := strings.IndexByte(name[j:], 'k')
		if k < 0 {
			return flux, joint
		}
		j += k
		if j < 5 || j+1 >= len(name) || name[j-5:j+2] != "_blocks" {
			continue
		}
		before := name[:j-5]
		flux = flux || strings.HasSuffix(before, "double") || strings.HasSuffix(before, "single") || strings.HasSuffix(before, "single_transformer")
		joint = joint || strings.HasSuffix(before, "joint")
	}
}

// llmLayer reports whether name contains "self_attn.q_proj", "mlp.gate_proj" or "attn.c_attn",
// looking at each '.' of it.
func llmLayer(name string) bool {
	for k := strings.IndexByte(name, '.'); k >= 0; {
		before, after := name[:k], name[k:]
		c := byte(0) // the byte after the '.' tells which word could follow
		if len(after) > 1 {
			c = after[1]
		}
		if c == 'q' && strings.HasSuffix(before, "self_attn") && strings.HasPrefix(after, ".q_proj") ||
			c == 'g' && strings.HasSuffix(before, "mlp") && strings.HasPrefix(after, ".gate_proj") ||
			c == 'c' && strings.HasSuffix(before, "attn") && strings.HasPrefix(after, ".c_attn") {
			return true
		}
		next := strings.IndexByte(name[k+1:], '.')
		if next < 0 {
			return false
		}
		k += 1 + next
	}
	return false
}

// token records a learnt token (into list, once; tok "" records only the width).
func (sv *survey) token(list *[]string, tok string, shape []uint64) {
	if tok != "" && !sv.seenToken[tok] {
		if sv.seenToken == nil {
			sv.seenToken = map[string]bool{}
		}
		sv.seenToken[tok] = true
		*list = append(*list, tok)
	}
	if len(shape) >= 1 {
		sv.tiDim = shape[len(shape)-1]
	}
}

// addPart files tensor i under its adapter module, or counts it as loose.
func (sv *survey) addPart(i int) {
	name, shape := sv.ts[i].Name, sv.ts[i].Shape
	mod, p := sv.part(name)
	switch {
	case p == pNone:
		sv.loose++
		if strings.HasSuffix(name, "attn2.to_k.weight") && len(shape) == 2 { // a checkpoint's cross-attention
			sv.contexts[shape[1]]++
		}
		return
	case (p == pDown || p == pUp) && strings.Contains(mod, ":") && loraDiffusionModule().MatchString(mod):
		sv.loraDiffusion++
	case p == pMLXA:
		sv.mlx++
	}
	sv.module(mod).parts[p] = int32(i + 1)
}

// module returns the module named name, added when it is new. A module's tensors usually come one
// after another: the last module is looked at before the table.
func (sv *survey) module(name string) *module {
	if n := len(sv.modules); n > 0 && sv.modules[n-1].name == name {
		return &sv.modules[n-1]
	}
	if 2*(len(sv.modules)+1) > len(sv.slots) {
		sv.grow()
	}
	k, tag := sv.slot(name)
	if s := sv.slots[k]; s != 0 {
		return &sv.modules[int(uint32(s))-1]
	}
	sv.modules = append(sv.modules, module{name: name})
	sv.slots[k] = tag | uint64(len(sv.modules))
	return &sv.modules[len(sv.modules)-1]
}

// slot is where the module named name is in sv.slots, or the empty slot where it would go, and the
// hash tag stored with it.
func (sv *survey) slot(name string) (k, tag uint64) {
	h := maphash.String(sv.seed, name)
	tag = h &^ (1<<32 - 1)
	mask := uint64(len(sv.slots) - 1)
	for k = h & mask; ; k = (k + 1) & mask {
		s := sv.slots[k]
		if s == 0 || (s&^(1<<32-1) == tag && sv.modules[int(uint32(s))-1].name == name) {
			return k, tag
		}
	}
}

// grow makes the table of modules larger (at first, room for a module in every tensor but a few) and
// puts the modules back in.
func (sv *survey) grow() {
	size := max(2*len(sv.slots), 64)
	for size < len(sv.ts) {
		size <<= 1
	}
	if cap(sv.slots) >= size {
		sv.slots = sv.slots[:size]
		clear(sv.slots)
	} else {
		sv.slots = make([]uint64, size)
	}
	for i := range sv.modules {
		k, tag := sv.slot(sv.modules[i].name)
		sv.slots[k] = tag | uint64(i+1)
	}
}

// adapter classifies every module, counting methods, ranks and convolutions, and the context widths
// the cross-attention layers show.
func (sv *survey) adapter() adapter {
	ad := adapter{ranks: map[int]int{}}
	for i := range sv.modules {
		md := &sv.modules[i]
		if md.has(pSparse) {
			ad.sparse++
		}
		a, rank, width, conv := md.classify(sv.ts)
		ad.algos[a]++
		if a != aFull && a != aNone {
			ad.lowish++
		}
		if rank > 0 {
			ad.ranks[rank]++
		}
		if conv {
			ad.conv++
		}
		if width > 0 && (isCrossAttnKey(md.name) || strings.HasPrefix(md.name, "unet:") && !unetChannels[width]) {
			sv.contexts[width]++
		}
	}
	return ad
}

// tokensOnly reports whether the file is nothing but learnt tokens (a textual inversion).
func (sv *survey) tokensOnly() bool {
	return sv.loose == 0 && len(sv.modules) == 0 && sv.a1111TI == 0 && len(sv.marked)+len(sv.angled) > 0
}

// kind is the model's kind: the method most of its adapter modules use, else what its names say.
func (sv *survey) kind(ad *adapter) Kind {
	best := aNone
	for a := aLoRA; a < nAlgos; a++ {
		if ad.algos[a] > ad.algos[best] {
			best = a
		}
	}
	switch {
	case ad.sparse > 0 || ad.algos[aFull] > 0 && ad.lowish > 0:
		return KindLyCORISDiff
	case best == aLoRA && ad.conv > 0:
		return KindLoCon
	case best != aNone:
		return algoKinds[best]
	case sv.peft > 0:
		return KindPEFTAdapter
	case sv.a1111TI > 0 && sv.tensors <= 4, sv.tokensOnly():
		return KindTextualInversion
	case sv.ldm > 0 || sv.flux > 0 || sv.sd3 > 0 || sv.hf > 0 || sv.tensors > 100:
		return KindCheckpoint
	}
	return KindUnknown
}

// naming is the scheme most specific to the names seen.
func (sv *survey) naming(kind Kind) Naming {
	switch {
	case sv.loraDiffusion > 0:
		return NamingLoRADiffusion
	case sv.kohya > 0:
		return NamingKohya
	case sv.lycoris > 0:
		return NamingLyCORIS
	case sv.peft > 0:
		return NamingPEFT
	case sv.mlx > 0:
		return NamingMLX
	case sv.diffusers > 0:
		return NamingDiffusers
	case kind == KindTextualInversion && sv.a1111TI > 0:
		return NamingA1111
	case sv.tokensOnly() && len(sv.angled) > 0:
		return NamingDiffusers
	case sv.ldm > 0:
		return NamingLDM
	case sv.hf > 0:
		return NamingTransformers
	}
	return NamingUnknown
}

// family is the base family the names and widths show; unknown rather than a guess.
func (sv *survey) family(kind Kind) Family {
	ctx := mostCommon(sv.contexts)
	ti := kind == KindTextualInversion
	switch {
	case sv.flux > 0:
		return FamilyFlux
	case sv.sd3 > 0:
		return FamilySD3
	case sv.sdxl > 0 || ctx == 2048 || (ti && sv.tiDim == 1280):
		return FamilySDXL
	case ctx == 1024 || (ti && sv.tiDim == 1024):
		return FamilySD2
	case ctx == 768 || (ti && sv.tiDim == 768):
		return FamilySD1
	case sv.kohyaSD > 0 && sv.teLayers > 12: // SD2's text encoder (OpenCLIP ViT-H) has 23 layers
		return FamilySD2
	case sv.kohyaSD > 0: // no width to tell (OFT's blocks): kohya names UNet blocks so only for SD 1.x and 2.x
		return FamilySD1
	case sv.llm > 0 || sv.hf > 0:
		return FamilyLLM
	}
	return FamilyUnknown
}

// isKohyaSDBlock reports whether name is kohya's name of an SD 1.x/2.x UNet block,
// ^(lora|oft)_unet_(down_blocks|up_blocks|mid_block)_ (lora_unet_down_blocks_0_…; SDXL's are
// input_blocks_…, middle_block_…, output_blocks_…). A regular expression took a fifth of
// `inspect --short`'s time on kohya LoRAs.
func isKohyaSDBlock(name string) bool {
	rest, ok := strings.CutPrefix(name, "lora_unet_")
	if !ok {
		rest, ok = strings.CutPrefix(name, "oft_unet_")
	}
	return ok && (strings.HasPrefix(rest, "down_blocks_") || strings.HasPrefix(rest, "up_blocks_") || strings.HasPrefix(rest, "mid_block_"))
}

// kohyaTELayer returns the index of the text encoder layer a kohya name is of,
// ^(?:lora|oft)_te_text_model_encoder_layers_(\d+)_, as written (digits).
func kohyaTELayer(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "lora_te_text_model_encoder_layers_")
	if !ok {
		rest, ok = strings.CutPrefix(name, "oft_te_text_model_encoder_layers_")
	}
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != '_' {
		return "", false
	}
	return rest[:n], true
}

// isCrossAttnKey reports whether a module is the key projection of a cross-attention layer, whose
// input width is the text encoder's context width (768 SD1, 1024 SD2, 2048 SDXL).
func isCrossAttnKey(module string) bool {
	return strings.HasSuffix(module, "attn2_to_k") || strings.HasSuffix(module, "attn2.to_k") || strings.HasSuffix(module, "attn2.processor.to_k")
}

func mostCommon(m map[uint64]int) uint64 {
	var best uint64
	bestN := 0
	for k, n := range m {
		if n > bestN || (n == bestN && k > best) {
			best, bestN = k, n
		}
	}
	return best
}

func mostCommonInt(m map[int]int) int {
	best, bestN := 0, 0
	for k, n := range m {
		if n > bestN || (n == bestN && k > best) {
			best, bestN = k, n
		}
	}
	return best
}
