package canon

import (
	"encoding/hex"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/gguf"
	"github.com/zeebo/blake3"
)

// The keys the card reads.
const (
	keyArchitecture = "general.architecture"
	keyChatTemplate = "tokenizer.chat_template"
)

// ggufMeta reads typed values of a GGUF header.
type ggufMeta struct{ f *gguf.File }

func (g ggufMeta) str(key string) string {
	if kv := g.f.KV(key); kv != nil {
		if s, ok := kv.Value.Str(); ok {
			return s
		}
	}
	return ""
}

func (g ggufMeta) float(key string) *float64 {
	if kv := g.f.KV(key); kv != nil {
		if x, ok := kv.Value.Float(); ok {
			return &x
		}
		if n, ok := kv.Value.Int(); ok {
			x := float64(n)
			return &x
		}
	}
	return nil
}

// count reads a non-negative integer, or an array of them.
func (g ggufMeta) count(key string) *card.Count {
	kv := g.f.KV(key)
	if kv == nil {
		return nil
	}
	if a := kv.Value.Array; a != nil {
		if a.Len != uint64(len(a.Head)) { // more layers than kept in memory: the file is not what it seems
			return nil
		}
		c := &card.Count{PerLayer: make([]uint64, 0, len(a.Head))}
		for _, v := range a.Head {
			n, ok := uintOf(v)
			if !ok {
				return nil
			}
			c.PerLayer = append(c.PerLayer, n)
		}
		return c
	}
	if n, ok := uintOf(kv.Value); ok {
		return &card.Count{N: n}
	}
	return nil
}

// uintOf is an integer value of any type that is not negative.
func uintOf(v gguf.Value) (uint64, bool) {
	if n, ok := v.Uint(); ok {
		return n, true
	}
	if n, ok := v.Int(); ok && n >= 0 {
		return uint64(n), true
	}
	return 0, false
}

// ggufCard is the GGUF section of m's card (nil for a model that is not GGUF or whose header could
// not be read).
func ggufCard(m *Model) *card.GGUF {
	f := m.ggufFile()
	if f == nil || !m.HeaderParsed {
		return nil
	}
	g := ggufMeta{f}
	arch := g.str(keyArchitecture)
	out := &card.GGUF{Format: f.Format, Version: f.Version, Alignment: f.Alignment, Architecture: arch,
		Type: g.str("general.type"), Organization: g.str("general.organization"), Basename: g.str("general.basename"),
		Finetune: g.str("general.finetune"), ModelVersion: g.str("general.version"), SizeLabel: g.str("general.size_label"),
		License: g.str("general.license"), LicenseLink: g.str("general.license.link"), URL: g.str("general.url"),
		RepoURL: g.str("general.repo_url"), SourceURL: g.str("general.source.url"), SourceRepoURL: g.str("general.source.repo_url"),
		QuantizedBy: g.str("general.quantized_by")}
	if out.License == "" {
		out.License = g.str("general.license.name")
	}
	if out.SourceRepoURL == "" {
		if repo := g.str("general.source.huggingface.repository"); repo != "" {
			out.SourceRepoURL = "https://huggingface.co/" + repo
		}
	}
	if c := g.count(gguf.FileTypeKey); c != nil && c.PerLayer == nil {
		name, _ := gguf.FileTypeName(c.N)
		out.FileType = &card.FileType{ID: c.N, Name: name}
	}
	if c := g.count("general.quantization_version"); c != nil && c.PerLayer == nil {
		out.QuantizationVersion = &c.N
	}
	out.Types = typeShares(m)
	if arch != "" {
		p := arch + "."
		out.ContextLength, out.EmbeddingLength = g.count(p+"context_length"), g.count(p+"embedding_length")
		out.BlockCount, out.FeedForwardLength = g.count(p+"block_count"), g.count(p+"feed_forward_length")
		out.HeadCount, out.HeadCountKV = g.count(p+"attention.head_count"), g.count(p+"attention.head_count_kv")
		out.ExpertCount, out.ExpertUsedCount = g.count(p+"expert_count"), g.count(p+"expert_used_count")
		out.Rope = card.Rope{DimensionCount: g.count(p + "rope.dimension_count"), FreqBase: g.float(p + "rope.freq_base"),
			ScalingType: g.str(p + "rope.scaling.type"), ScalingFactor: g.float(p + "rope.scaling.factor"),
			OriginalContextLength: g.count(p + "rope.scaling.original_context_length")}
	}
	out.Tokenizer = tokenizerOf(f)
	out.ChatTemplate = chatTemplateOf(f)
	out.Strings = map[string]string{}
	for _, k := range []string{"general.name", "general.author", "general.description", "general.base_model.0.name", "general.base_model.0.repo_url", "adapter.type"} {
		if kv := f.KV(k); kv != nil {
			if s, ok := kv.Value.Str(); ok {
				out.Strings[k] = s
			}
		}
	}
	return out
}

// typeShares is the quantisation mix of m's tensors, largest share first (then by name).
func typeShares(m *Model) []card.TypeShare {
	per, total := m.Params()
	out := make([]card.TypeShare, 0, len(per))
	for _, p := range per {
		ts := card.TypeShare{DType: p.DType, Tensors: p.Tensors, Bytes: p.Bytes}
		if total.Bytes > 0 {
			ts.Share = math.Round(float64(p.Bytes)/float64(total.Bytes)*1e4) / 1e4
		}
		out = append(out, ts)
	}
	slices.SortStableFunc(out, func(a, b card.TypeShare) int {
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(string(a.DType), string(b.DType))
	})
	return out
}

// tokenizerOf reads the tokenizer.ggml.* keys (nil when there are none). The vocabulary is counted,
// not read: the card costs no pass over a tokenizer's hundred thousand tokens.
func tokenizerOf(f *gguf.File) *card.Tokenizer {
	var t *card.Tokenizer
	for i := range f.KVs {
		kv := &f.KVs[i]
		rest, ok := strings.CutPrefix(kv.Key, "tokenizer.ggml.")
		if !ok {
			continue
		}
		if t == nil {
			t = &card.Tokenizer{SpecialTokens: map[string]uint64{}}
		}
		switch name, isID := strings.CutSuffix(rest, "_token_id"); {
		case rest == "model":
			t.Model, _ = kv.Value.Str()
		case rest == "pre":
			t.Pre, _ = kv.Value.Str()
		case rest == "tokens" && kv.Value.Array != nil:
			t.VocabSize = kv.Value.Array.Len
		case rest == "merges" && kv.Value.Array != nil:
			t.Merges = kv.Value.Array.Len
		case isID:
			if n, ok := uintOf(kv.Value); ok {
				if _, seen := t.SpecialTokens[name]; !seen { // the first pair, as llama.cpp reads it
					t.SpecialTokens[name] = n
				}
			}
		}
	}
	return t
}

// markerPattern finds the special markers a chat template writes: <|im_start|>, <start_of_turn>,
// [INST], <|start_header_id|>, </s>, …
var markerPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<\|[^|<>\s'"{}]{1,40}\|>|</?[a-z_]{1,30}>|\[/?[A-Z_]{2,20}\]`)
})

// maxMarkers is how many markers a summary lists.
const maxMarkers = 8

// chatTemplateOf summarises tokenizer.chat_template (nil when absent).
func chatTemplateOf(f *gguf.File) *card.ChatTemplate {
	kv := f.KV(keyChatTemplate)
	if kv == nil || kv.Value.Type != gguf.ValString {
		return nil
	}
	text, _ := kv.Value.Str()
	c := &card.ChatTemplate{Bytes: kv.Value.Len(), Lines: strings.Count(text, "\n") + 1, Markers: []string{}, Named: []string{}, Text: text}
	sum := blake3.Sum256([]byte(text))
	c.BLAKE3 = hex.EncodeToString(sum[:8])
	if kv.Value.Truncated() {
		c.BLAKE3 = "" // not the whole template's
	}
	for _, m := range markerPattern().FindAllString(text, -1) {
		if !slices.Contains(c.Markers, m) && len(c.Markers) < maxMarkers {
			c.Markers = append(c.Markers, m)
		}
	}
	for i := range f.KVs {
		if name, ok := strings.CutPrefix(f.KVs[i].Key, keyChatTemplate+"."); ok && !slices.Contains(c.Named, name) {
			c.Named = append(c.Named, name)
		}
	}
	return c
}
