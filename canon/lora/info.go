// Package lora reads the conventions of the LoRA world: what a model is (Info) from the metadata its
// trainers write (kohya ss_*, AddNet ssmd_*, Stability modelspec.*), from the sidecar files other tools
// leave next to it (CivitAI .civitai.info, A1111 .json, PEFT adapter_config.json, …), and from its
// tensors (kind, naming scheme, base family, rank, learnt tokens). It also holds the one table of
// metadata keys the commands treat specially: the keys trainers embed file hashes in
// (EmbeddedHashKeys), the keys that change on every training run (VolatileKeys), writer bookkeeping
// (BookkeepingKeys), and the keys a card shows rather than folds into a count (KeysThatMatter).
//
// It never prints, and reads no file but a model's sidecars.
package lora

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
)

// Info is what a model is, as the LoRA world describes it: from the metadata conventions of its writers
// (kohya ss_*, AddNet ssmd_*, Stability modelspec.*), from sidecar files other tools leave next to it,
// and from its tensors. Each value says where it came from (Sources), since users want to know whether a
// trigger word was curated on CivitAI or guessed from a folder name.
type Info struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Author      string `json:"author,omitempty"`
	// Triggers are the declared trigger words, most reliable first: CivitAI's trained words, the A1111
	// card, the LoRA Manager card, ssmd_keywords, modelspec.trigger_phrase, the tokens the model carries.
	Triggers []string `json:"triggers"`
	// GuessedTriggers are words guessed from the training data (kohya dataset folder names, the most
	// frequent tags), not declared by anyone; never repeats a word of Triggers.
	GuessedTriggers []string `json:"guessed_triggers"`
	// TriggerDetails has every word of Triggers then of GuessedTriggers, with where it came from;
	// TriggerGroups groups them by source.
	TriggerDetails []Trigger `json:"trigger_details"`
	BaseModel      string    `json:"base_model"`
	CivitAI        CivitAI   `json:"civitai"`
	// NetworkModule is the trainer's name for the network: ss_network_module (networks.lora,
	// lycoris.kohya, …) or a PEFT adapter_config.json's peft_type (LORA, IA3, …).
	NetworkModule string `json:"network_module,omitempty"`
	// DeclaredRank and DeclaredAlpha are what the metadata (ss_network_dim, ss_network_alpha) or a PEFT
	// adapter_config.json (r, lora_alpha) says.
	DeclaredRank  string `json:"declared_rank,omitempty"`
	DeclaredAlpha string `json:"declared_alpha,omitempty"`
	// TargetModules are the layers a PEFT adapter_config.json says the adapter changes (a list of names,
	// or one regular expression or "all-linear", as PEFT allows).
	TargetModules []string `json:"target_modules,omitempty"`
	// EmbeddedHashes are the hashes a trainer wrote into the metadata (verified by `hash --all` and
	// `inspect --verify`).
	EmbeddedHashes map[string]string `json:"embedded_hashes,omitempty"`
	// PreferredWeight is the weight the A1111 card says to use the LoRA at (nil when it says none: the
	// web UI writes 0 for that).
	PreferredWeight *float64 `json:"preferred_weight,omitempty"`

	// What the tensors say, whatever the metadata claims.
	Kind   Kind   `json:"kind"`
	Naming Naming `json:"naming"`
	Family Family `json:"family"`
	// Rank is the most common rank of the adapter's low-rank pairs (0 when not an adapter); Ranks lists
	// every rank when they differ.
	Rank  int   `json:"rank"`
	Ranks []int `json:"ranks,omitempty"`
	// EmbeddedTokens are the learnt tokens the file carries, in file order: a LoRA's pivotal-tuning
	// tokens (lora_diffusion's <s1>, A1111's bundle_emb.NAME) or a diffusers textual inversion's
	// <token>. They are trigger words too.
	EmbeddedTokens []string `json:"embedded_tokens,omitempty"`

	// Sources maps each field above that has a value to where it came from ("metadata ss_output_name",
	// "sidecar x.civitai.info", "sidecar adapter_config.json", "tensors", "file name").
	Sources map[string]string `json:"sources"`
	// Findings are problems found while deriving the info (bad sidecars, metadata that disagrees with the
	// tensors).
	Findings []finding.Finding `json:"-"`
}

// Trigger is one trigger word and where it came from.
type Trigger struct {
	Word   string `json:"word"`
	Source string `json:"source"`
	// Derived is true for words guessed from the training data (folder names, frequent tags), not
	// declared by a person or trainer.
	Derived bool `json:"derived"`
}

// TriggerGroup is the trigger words that came from one source.
type TriggerGroup struct {
	Source  string
	Derived bool
	Words   []string
}

// TriggerGroups groups TriggerDetails by source, in the order each source first gave a word (declared
// sources first, then guessed ones), each group's words in their order: what a writer shows as
// "pepper, witch (sidecar pepper.civitai.info trainedWords) · carrot (metadata ssmd_keywords)".
func (in *Info) TriggerGroups() []TriggerGroup {
	type key struct {
		source  string
		derived bool
	}
	var groups []TriggerGroup
	at := map[key]int{}
	for _, t := range in.TriggerDetails {
		k := key{t.Source, t.Derived}
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, TriggerGroup{Source: t.Source, Derived: t.Derived})
		}
		groups[i].Words = append(groups[i].Words, t.Word)
	}
	return groups
}

// CivitAI holds the ids that locate a model on CivitAI (0 when unknown; null in JSON).
type CivitAI struct {
	ModelID   int64
	VersionID int64
}

// URL is the model's page on CivitAI (its version's, when known), "" when the model id is unknown. It
// is made of the ids alone, never taken from a file.
func (c CivitAI) URL() string {
	switch {
	case c.ModelID == 0:
		return ""
	case c.VersionID == 0:
		return fmt.Sprintf("https://civitai.com/models/%d", c.ModelID)
	}
	return fmt.Sprintf("https://civitai.com/models/%d?modelVersionId=%d", c.ModelID, c.VersionID)
}

// MarshalJSON writes {"model_id": …, "version_id": …, "url": …}, null for what is unknown.
func (c CivitAI) MarshalJSON() ([]byte, error) {
	id := func(n int64) any {
		if n == 0 {
			return nil
		}
		return n
	}
	var u any
	if s := c.URL(); s != "" {
		u = s
	}
	return json.Marshal(map[string]any{"model_id": id(c.ModelID), "version_id": id(c.VersionID), "url": u})
}

// Sidecar kinds: the endings of the files other tools write next to a model (<stem><ending>), and the
// fixed name of PEFT's config.
const (
	SidecarCivitAI    = ".civitai.info"  // Civitai Helper, SD Civitai Browser: CivitAI's model version record
	SidecarMetadata   = ".metadata.json" // LoRA Manager's card
	SidecarAPIInfo    = ".api_info.json" // CivitAI's model record
	SidecarA1111      = ".json"          // the AUTOMATIC1111 web UI's card
	SidecarPEFTConfig = "adapter_config.json"
)

// peftWeightsPrefix starts the name of the weights PEFT saves beside adapter_config.json.
const peftWeightsPrefix = "adapter_model"

// Sidecar is a JSON file another tool wrote next to a model.
type Sidecar struct {
	// Kind is the file name's ending (SidecarCivitAI, SidecarMetadata, SidecarAPIInfo, SidecarA1111),
	// or SidecarPEFTConfig for PEFT's adapter_config.json beside adapter_model*.safetensors.
	Kind string
	Path string
	Data map[string]any
}

// sidecarKinds are the sidecar kinds stdiff reads, in order of how much they are trusted.
var sidecarKinds = []string{SidecarCivitAI, SidecarMetadata, SidecarAPIInfo, SidecarA1111, SidecarPEFTConfig}

// sidecarPath is where a sidecar of a kind would be for a model, "" when the model has none of that
// kind: PEFT saves adapter_model.safetensors and adapter_config.json in one folder, whatever the
// folder is called, so only a model named adapter_model* has one.
func sidecarPath(modelPath, kind string) string {
	if kind == SidecarPEFTConfig {
		if !strings.HasPrefix(filepath.Base(modelPath), peftWeightsPrefix) {
			return ""
		}
		return filepath.Join(filepath.Dir(modelPath), SidecarPEFTConfig)
	}
	return strings.TrimSuffix(modelPath, filepath.Ext(modelPath)) + kind
}

// SidecarNames are the names of the files LoadSidecars looks for in the folder of the model file
// modelPath, in the order it reads them: a model none of them is beside has no sidecars.
func SidecarNames(modelPath string) []string {
	var out []string
	for _, kind := range sidecarKinds {
		if p := sidecarPath(modelPath, kind); p != "" {
			out = append(out, filepath.Base(p))
		}
	}
	return out
}

// maxSidecar is the largest sidecar read; larger ones are reported, not read.
const maxSidecar = 16 << 20

// LoadSidecars reads the sidecar files next to a local model (<stem>.civitai.info, <stem>.json,
// <stem>.metadata.json, <stem>.api_info.json, and PEFT's adapter_config.json beside
// adapter_model*.safetensors). A sidecar that cannot be used (not JSON, not an object, too large,
// unreadable) becomes a finding; it never stops the model from being inspected. Once ctx is done it
// reads no more sidecars and returns what it has.
func LoadSidecars(ctx context.Context, modelPath string) ([]Sidecar, []finding.Finding) {
	var out []Sidecar
	var fs []finding.Finding
	for _, kind := range sidecarKinds {
		if ctx.Err() != nil {
			break
		}
		path := sidecarPath(modelPath, kind)
		if path == "" {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		bad := func(msg string) {
			fs = append(fs, finding.Finding{Code: canon.CodeBadSidecar, Severity: finding.SevWarning, Offset: -1,
				Message: fmt.Sprintf("sidecar %s %s; ignored", filepath.Base(path), msg)})
		}
		if !st.Mode().IsRegular() {
			bad("is not a regular file")
			continue
		}
		if st.Size() > maxSidecar {
			bad(fmt.Sprintf("is %d bytes, more than the %d stdiff reads", st.Size(), maxSidecar))
			continue
		}
		f, _, err := canon.OpenRegular(path, os.O_RDONLY) // never blocks on a FIFO put there since the Stat
		if err != nil {
			var re *canon.ReadError
			if errors.As(err, &re) {
				bad("cannot be read: " + re.Reason())
			} else {
				bad("cannot be read: " + err.Error())
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, maxSidecar+1))
		f.Close()
		if err != nil {
			bad("cannot be read: " + err.Error())
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(b, &data); err != nil {
			var v any
			if json.Unmarshal(b, &v) == nil {
				bad("is JSON but not an object")
			} else {
				bad("is not valid JSON: " + err.Error())
			}
			continue
		}
		if len(data) == 0 {
			continue // `{}`: Civitai Helper writes it when CivitAI had no match
		}
		out = append(out, Sidecar{Kind: kind, Path: path, Data: data})
	}
	return out, fs
}

// Derive works out a model's Info from its metadata, its sidecars and its tensors. fileName is the
// model's file name, the name of last resort.
func Derive(m *canon.Model, sidecars []Sidecar, fileName string) Info {
	in := Info{Triggers: []string{}, GuessedTriggers: []string{}, TriggerDetails: []Trigger{}, Sources: map[string]string{}}
	meta := func(key string) string {
		v, _ := m.Meta(key)
		if saysNothing(v) {
			return ""
		}
		return strings.TrimSpace(v)
	}
	set := func(field *string, name, value, source string) bool {
		if *field != "" || strings.TrimSpace(value) == "" {
			return false
		}
		*field = strings.TrimSpace(value)
		in.Sources[name] = source
		return true
	}
	fromMeta := func(field *string, name string, keys ...string) {
		for _, k := range keys {
			if set(field, name, meta(k), "metadata "+k) {
				return
			}
		}
	}
	sc := map[string]*Sidecar{}
	for i := range sidecars {
		sc[sidecars[i].Kind] = &sidecars[i]
	}
	fromSidecar := func(field *string, name, kind string, path ...string) {
		if s := sc[kind]; s != nil {
			v, present := lookup(s.Data, path...)
			if str, ok := v.(string); ok {
				set(field, name, str, "sidecar "+filepath.Base(s.Path))
			} else if present && v != nil {
				in.badSidecar(s, path, "a string")
			}
		}
	}

	// Name: what a person set, then CivitAI, then what the trainer wrote, then the file.
	fromMeta(&in.Name, "name", "ssmd_display_name")
	fromSidecar(&in.Name, "name", SidecarCivitAI, "model", "name")
	fromSidecar(&in.Name, "name", SidecarMetadata, "model_name")
	fromSidecar(&in.Name, "name", SidecarAPIInfo, "name")
	fromMeta(&in.Name, "name", "modelspec.title", "ss_output_name")
	name, source := nameOfFile(fileName)
	set(&in.Name, "name", name, source)

	fromMeta(&in.Description, "description", "ssmd_description", "modelspec.description")
	fromSidecar(&in.Description, "description", SidecarA1111, "description")
	fromSidecar(&in.Description, "description", SidecarMetadata, "modelDescription")
	fromSidecar(&in.Description, "description", SidecarCivitAI, "description")
	fromMeta(&in.Author, "author", "ssmd_author", "modelspec.author")
	fromSidecar(&in.Author, "author", SidecarAPIInfo, "creator", "username")
	fromSidecar(&in.Author, "author", SidecarCivitAI, "creator", "username")

	fromSidecar(&in.BaseModel, "base_model", SidecarCivitAI, "baseModel")
	fromSidecar(&in.BaseModel, "base_model", SidecarMetadata, "base_model")
	fromSidecar(&in.BaseModel, "base_model", SidecarA1111, "sd version")
	fromSidecar(&in.BaseModel, "base_model", SidecarPEFTConfig, "base_model_name_or_path")
	fromMeta(&in.BaseModel, "base_model", "ss_base_model_version", "modelspec.architecture", "ss_sd_model_name")

	fromMeta(&in.NetworkModule, "network_module", "ss_network_module")
	fromMeta(&in.DeclaredRank, "declared_rank", "ss_network_dim")
	rankFromMeta := in.DeclaredRank != ""
	fromMeta(&in.DeclaredAlpha, "declared_alpha", "ss_network_alpha")
	if s := sc[SidecarPEFTConfig]; s != nil {
		fromSidecar(&in.NetworkModule, "network_module", SidecarPEFTConfig, "peft_type")
		in.peftConfig(s, set)
	}
	for _, k := range EmbeddedHashKeys {
		if v := meta(k.Key); v != "" {
			if in.EmbeddedHashes == nil {
				in.EmbeddedHashes = map[string]string{}
			}
			in.EmbeddedHashes[k.Key] = v
		}
	}

	in.civitaiIDs(m, sc)
	in.fromTensors(m)
	in.triggers(meta, sc)
	if in.DeclaredRank != "" && in.Rank > 0 && len(in.Ranks) == 0 {
		if d, err := strconv.Atoi(in.DeclaredRank); err == nil && d != in.Rank {
			by, at := SidecarPEFTConfig+" r", int64(-1)
			if rankFromMeta {
				by, at = "ss_network_dim", metaOffset(m, "ss_network_dim")
			}
			in.Findings = append(in.Findings, finding.Finding{Code: canon.CodeRankMismatch, Severity: finding.SevWarning, Offset: at,
				Message: fmt.Sprintf("%s says rank %d but the tensors have rank %d", by, d, in.Rank)})
		}
	}
	return in
}

// genericStems are the file names libraries save any model's weights under (PEFT, diffusers,
// transformers): such a file is named by its folder.
var genericStems = map[string]bool{"adapter_model": true, "pytorch_lora_weights": true, "model": true,
	"diffusion_pytorch_model": true, "pytorch_model": true}

// nameOfFile is the name of last resort of the model in the file at path, and where it comes from: the
// file name without its extension; for a generic one (adapter_model.safetensors,
// pytorch_lora_weights.safetensors, model.fp16.safetensors…), the folder's name, or in a Hugging Face
// cache (models--ORG--REPO/snapshots/REV/…) the repository's.
func nameOfFile(path string) (name, source string) {
	base := filepath.Base(path)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	if !genericStems[strings.SplitN(stem, ".", 2)[0]] {
		return stem, "file name"
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return stem, "file name"
	}
	if snapshots := filepath.Dir(dir); filepath.Base(snapshots) == "snapshots" {
		if repo, ok := strings.CutPrefix(filepath.Base(filepath.Dir(snapshots)), "models--"); ok && repo != "" {
			return strings.Replace(repo, "--", "/", 1), "Hugging Face cache folder"
		}
	}
	if folder := filepath.Base(dir); folder != "/" && folder != "." {
		return folder, "folder name"
	}
	return stem, "file name"
}

// peftConfig reads the numbers and lists of a PEFT adapter_config.json: the rank r and lora_alpha
// (when the metadata said nothing), and target_modules. set is Derive's: it fills an empty field and
// records where the value came from.
func (in *Info) peftConfig(s *Sidecar, set func(field *string, name, value, source string) bool) {
	src := "sidecar " + filepath.Base(s.Path)
	for _, f := range []struct {
		field     *string
		name, key string
	}{{&in.DeclaredRank, "declared_rank", "r"}, {&in.DeclaredAlpha, "declared_alpha", "lora_alpha"}} {
		switch v := s.Data[f.key].(type) {
		case nil:
		case float64:
			set(f.field, f.name, strconv.FormatFloat(v, 'f', -1, 64), src)
		default:
			in.badSidecar(s, []string{f.key}, "a number")
		}
	}
	switch v := s.Data["target_modules"].(type) {
	case nil:
	case string: // a regular expression, or "all-linear"
		if v != "" {
			in.TargetModules = []string{v}
		}
	case []any:
		for _, x := range v {
			if str, ok := x.(string); ok {
				in.TargetModules = append(in.TargetModules, str)
			} else {
				in.badSidecar(s, []string{"target_modules"}, "a list of names")
				in.TargetModules = nil
				break
			}
		}
	default:
		in.badSidecar(s, []string{"target_modules"}, "a list of names")
	}
	if len(in.TargetModules) > 0 {
		sort.Strings(in.TargetModules)
		in.Sources["target_modules"] = src
	}
}

// saysNothing reports whether a metadata value is empty, or Python's or JSON's nothing (trainers write
// str(None)).
func saysNothing(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || v == "None" || v == "null"
}

// badSidecar records a sidecar field of the wrong type, once per sidecar and field.
func (in *Info) badSidecar(s *Sidecar, path []string, want string) {
	in.Findings = append(in.Findings, finding.Finding{Code: canon.CodeBadSidecar, Severity: finding.SevWarning, Offset: -1,
		Message: fmt.Sprintf("sidecar %s: %s is not %s; ignored", filepath.Base(s.Path), strings.Join(path, "."), want)})
}

func metaOffset(m *canon.Model, key string) int64 {
	for _, e := range m.Metadata {
		if e.Key == key {
			return e.Offset
		}
	}
	return -1
}

var (
	civitaiURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`civitai\.com/models/(\d+)`) })
	// civitaiNotesURL finds a CivitAI page in free text: its model id and, if given, its version id.
	civitaiNotesURL = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`civitai\.com/models/(\d+)(?:[^\s?#]*\?(?:[^\s#]*&)?modelVersionId=(\d+))?`)
	})
)

func (in *Info) civitaiIDs(m *canon.Model, sc map[string]*Sidecar) {
	setID := func(field *int64, name string, v any, source string) {
		if *field != 0 {
			return
		}
		var n int64
		switch x := v.(type) {
		case float64:
			if x == float64(int64(x)) {
				n = int64(x)
			}
		case string:
			n, _ = strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		}
		if n > 0 {
			*field = n
			in.Sources[name] = source
		}
	}
	for _, kind := range []string{SidecarCivitAI, SidecarMetadata, SidecarAPIInfo, SidecarA1111} {
		s := sc[kind]
		if s == nil {
			continue
		}
		src := "sidecar " + filepath.Base(s.Path)
		switch kind {
		case SidecarCivitAI:
			v, _ := lookup(s.Data, "modelId")
			setID(&in.CivitAI.ModelID, "civitai.model_id", v, src)
			v, _ = lookup(s.Data, "id")
			setID(&in.CivitAI.VersionID, "civitai.version_id", v, src)
		case SidecarMetadata:
			v, _ := lookup(s.Data, "civitai", "modelId")
			setID(&in.CivitAI.ModelID, "civitai.model_id", v, src)
			v, _ = lookup(s.Data, "civitai", "id")
			setID(&in.CivitAI.VersionID, "civitai.version_id", v, src)
		case SidecarAPIInfo:
			v, _ := lookup(s.Data, "id")
			setID(&in.CivitAI.ModelID, "civitai.model_id", v, src)
		case SidecarA1111:
			v, _ := lookup(s.Data, "modelId")
			setID(&in.CivitAI.ModelID, "civitai.model_id", v, src)
			if notes, ok := s.Data["notes"].(string); ok { // people paste the page they downloaded it from
				if g := civitaiNotesURL().FindStringSubmatch(notes); g != nil && in.CivitAI.ModelID == 0 {
					setID(&in.CivitAI.ModelID, "civitai.model_id", g[1], src+" notes")
					setID(&in.CivitAI.VersionID, "civitai.version_id", g[2], src+" notes")
				}
			}
			switch w := s.Data["preferred weight"].(type) {
			case nil:
			case float64:
				if w != 0 && !math.IsInf(w, 0) {
					in.PreferredWeight = &w
					in.Sources["preferred_weight"] = src
				}
			default:
				in.badSidecar(s, []string{"preferred weight"}, "a number")
			}
		}
	}
	if src, ok := m.Meta("ssmd_source"); ok {
		if u, err := url.Parse(strings.TrimSpace(src)); err == nil {
			if g := civitaiURL().FindStringSubmatch(u.Host + u.Path); g != nil {
				setID(&in.CivitAI.ModelID, "civitai.model_id", g[1], "metadata ssmd_source")
				setID(&in.CivitAI.VersionID, "civitai.version_id", u.Query().Get("modelVersionId"), "metadata ssmd_source")
			}
		}
	}
}

// repeatsDir matches kohya's dataset folder names, <repeats>_<words>: ^\d+_(.+)$ (ASCII digits, words
// of no newline), returning the words.
func repeatsDir(name string) (words string, ok bool) {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(name) || name[i] != '_' || strings.IndexByte(name[i+1:], '\n') >= 0 {
		return "", false
	}
	return name[i+1:], true
}

// objectKeys returns the keys of the JSON object s, once each (in no order), as json.Unmarshal into
// a map[string]json.RawMessage has them: none when s is no JSON object. The form sd-scripts writes
// for ss_dataset_dirs, {"<folder>": {"n_repeats": 10, "img_count": 47}, …}, is read by scanObjectKeys;
// anything else goes to encoding/json.
func objectKeys(s string) []string {
	if keys, ok := scanObjectKeys(s); ok {
		return keys
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	return keys
}

// triggers collects trigger words in the conventions' order of reliability: declared (CivitAI's trained
// words, the A1111 card, LoRA Manager's copy of CivitAI's, AddNet keywords, ModelSpec, the tokens the
// model carries) into Triggers, then guessed from the training data (folder names, then the most
// frequent tags) into GuessedTriggers. Each word once, with the first source that gave it.
func (in *Info) triggers(meta func(string) string, sc map[string]*Sidecar) {
	seen := map[string]bool{}
	add := func(word, source string, derived bool) {
		word = strings.TrimSpace(word)
		k := strings.ToLower(word)
		if word == "" || seen[k] {
			return
		}
		seen[k] = true
		if derived {
			in.GuessedTriggers = append(in.GuessedTriggers, word)
		} else {
			in.Triggers = append(in.Triggers, word)
		}
		in.TriggerDetails = append(in.TriggerDetails, Trigger{Word: word, Source: source, Derived: derived})
	}
	// trainedWords: CivitAI's list, each entry possibly "a, b".
	trainedWords := func(kind string, path ...string) {
		s := sc[kind]
		if s == nil {
			return
		}
		v, present := lookup(s.Data, path...)
		words, isList := v.([]any)
		if present && !isList && v != nil {
			in.badSidecar(s, path, "a list")
		}
		for _, w := range words {
			if str, ok := w.(string); ok {
				for _, part := range strings.Split(str, ",") {
					add(part, "sidecar "+filepath.Base(s.Path)+" "+strings.Join(path, "."), false)
				}
			}
		}
	}
	trainedWords(SidecarCivitAI, "trainedWords")
	if s := sc[SidecarA1111]; s != nil {
		v, present := s.Data["activation text"]
		if str, ok := v.(string); ok {
			for _, part := range strings.Split(str, ",") {
				add(part, "sidecar "+filepath.Base(s.Path)+" activation text", false)
			}
		} else if present && v != nil {
			in.badSidecar(s, []string{"activation text"}, "a string")
		}
	}
	trainedWords(SidecarMetadata, "civitai", "trainedWords")
	for _, k := range []string{"ssmd_keywords", "modelspec.trigger_phrase", "trained_words"} {
		for _, part := range strings.Split(meta(k), ",") {
			add(part, "metadata "+k, false)
		}
	}
	for _, tok := range in.EmbeddedTokens {
		add(tok, "tensors (embedded tokens)", false)
	}
	// Derived: kohya dataset folders named <repeats>_<words>.
	var dirs []string
	freqDirs, top, freqOK := tagSummary(meta("ss_tag_frequency"), 5)
	for _, k := range []string{"ss_dataset_dirs", "ss_tag_frequency"} {
		if k == "ss_tag_frequency" && freqOK { // its folders, read once
			dirs = append(dirs, freqDirs...)
			continue
		}
		dirs = append(dirs, objectKeys(meta(k))...)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if words, ok := repeatsDir(filepath.Base(d)); ok {
			add(words, "folder name "+d, true)
		}
	}
	// Derived: the most frequent tags.
	for _, t := range top {
		add(t, "metadata ss_tag_frequency (most frequent tags)", true)
	}
}

// wrongType is what lookup returns when a step of the path is there but is not an object.
type wrongType struct{}

// lookup follows path into a JSON object. present is false when the path is absent; when a step is there
// but not an object, the value is wrongType{}.
func lookup(data map[string]any, path ...string) (v any, present bool) {
	var cur any = data
	for _, p := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return wrongType{}, true
		}
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}
