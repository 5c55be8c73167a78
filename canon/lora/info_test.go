package lora

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/tensor"
)

// realKohyaMetadata returns the real kohya-ss SDXL LoRA metadata from the shared corpus, each value
// stringified as a real file stores it (nested values JSON-encoded, Python literals as Python prints them).
func realKohyaMetadata(t *testing.T) []stfile.KV {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "corpus", "real", "civitai-kohya-sdxl-lora-metadata.json"))
	if err != nil {
		t.Skipf("real corpus not found (it lives beside the project in shared/): %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	var kvs []stfile.KV
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
			switch s {
			case "true":
				s = "True"
			case "false":
				s = "False"
			case "null":
				s = "None"
			}
		}
		kvs = append(kvs, stfile.KV{Key: k, Value: s})
	}
	return kvs
}

// kohyaSDXL builds a kohya SDXL LoRA of rank 32 with the given metadata.
func kohyaSDXL(meta []stfile.KV) stfile.File {
	f := stfile.File{Metadata: meta}
	add := func(base string, in, out uint64) {
		f.Tensors = append(f.Tensors,
			stfile.Tensor{Name: base + ".alpha", DType: "F16", Shape: []uint64{}},
			stfile.Tensor{Name: base + ".lora_down.weight", DType: "F16", Shape: []uint64{32, in}},
			stfile.Tensor{Name: base + ".lora_up.weight", DType: "F16", Shape: []uint64{out, 32}})
	}
	add("lora_unet_input_blocks_4_1_transformer_blocks_0_attn2_to_k", 2048, 640)
	add("lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q", 640, 640)
	add("lora_te1_text_model_encoder_layers_0_self_attn_q_proj", 768, 768)
	add("lora_te2_text_model_encoder_layers_0_self_attn_q_proj", 1280, 1280)
	return f
}

// writeModel writes pepper.safetensors and its sidecars (by ending) into a fresh folder and returns the
// model's path.
func writeModel(t *testing.T, f stfile.File, sidecars map[string]string) string {
	t.Helper()
	files := map[string]string{}
	for ext, body := range sidecars {
		files["pepper"+ext] = body
	}
	return writeFiles(t, t.TempDir(), "pepper.safetensors", f, files)
}

// writeFiles writes a model under a name and other files (by name) into dir and returns the model's path.
func writeFiles(t *testing.T, dir, name string, f stfile.File, files map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, f.Build(), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func infoOf(t *testing.T, path string) (Info, []finding.Finding) {
	t.Helper()
	src, st, err := canon.OpenRegular(path, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, err := canon.Read(src, st.Size(), src.Name())
	if err != nil || !m.Valid() {
		t.Fatalf("%v %v", err, m.RefErr)
	}
	sc, fs := LoadSidecars(t.Context(), path)
	in := Derive(m, sc, path)
	return in, append(fs, in.Findings...)
}

func TestInfoRealKohyaMetadata(t *testing.T) {
	in, fs := infoOf(t, writeModel(t, kohyaSDXL(realKohyaMetadata(t)), nil))
	if len(fs) != 0 {
		t.Errorf("findings: %+v", fs)
	}
	want := map[string]any{
		"name": in.Name == "Pepper__Carrot" && in.Sources["name"] == "metadata modelspec.title",
		"kind": in.Kind == "lora", "naming": in.Naming == "kohya", "family": in.Family == "sdxl", "rank": in.Rank == 32,
		"base":    in.BaseModel == "sdxl_base_v1-0" && in.Sources["base_model"] == "metadata ss_base_model_version",
		"module":  in.NetworkModule == "networks.lora" && in.DeclaredRank == "32" && in.DeclaredAlpha == "32",
		"hashes":  in.EmbeddedHashes["sshs_model_hash"] == "52e53d98fe907d8b11eba16ce27575bea66ea987e2a1c0a8e9c2240909f01ff3",
		"civitai": in.CivitAI == CivitAI{},
		// The folder is "img" (no <repeats>_ prefix), so only the most frequent tags are guessed; counts
		// checked with Python: 1girl 96, brown hair 75, hat 63, solo 63, open mouth 46.
		// They are guesses, not triggers: the file declares none.
		"triggers": len(in.Triggers) == 0 && reflect.DeepEqual(in.GuessedTriggers, []string{"1girl", "brown hair", "hat", "solo", "open mouth"}) &&
			in.TriggerDetails[4].Derived && in.TriggerDetails[4].Source == "metadata ss_tag_frequency (most frequent tags)",
	}
	for k, ok := range want {
		if ok != true {
			t.Errorf("%s wrong: %+v", k, in)
		}
	}
}

func TestInfoSidecars(t *testing.T) {
	meta := []stfile.KV{{Key: "ss_output_name", Value: "pepper_v2"}, {Key: "ss_network_dim", Value: "32"},
		{Key: "ss_tag_frequency", Value: `{"10_pepper witch": {"pepper witch": 50, "hat": 40}}`},
		{Key: "ss_base_model_version", Value: "sdxl_base_v1-0"}}
	cases := []struct {
		name, ext, body string
		check           func(in Info) bool
	}{
		{"none", "", "", func(in Info) bool {
			return in.Name == "pepper_v2" && len(in.Triggers) == 0 && reflect.DeepEqual(in.GuessedTriggers, []string{"pepper witch", "hat"}) &&
				in.TriggerDetails[0].Derived && in.TriggerDetails[0].Source == "folder name 10_pepper witch"
		}},
		{"civitai-helper", ".civitai.info", `{"id": 123, "modelId": 456, "name": "v1", "trainedWords": ["pepper", "carrot girl, witch"],
			"baseModel": "SDXL 1.0", "model": {"name": "Pepper & Carrot", "type": "LORA"}, "creator": {"username": "artist"}}`, func(in Info) bool {
			return in.Name == "Pepper & Carrot" && reflect.DeepEqual(in.Triggers, []string{"pepper", "carrot girl", "witch"}) &&
				reflect.DeepEqual(in.GuessedTriggers, []string{"pepper witch", "hat"}) &&
				!in.TriggerDetails[0].Derived && in.BaseModel == "SDXL 1.0" && in.CivitAI == CivitAI{456, 123} &&
				in.Author == "artist" && in.Sources["civitai.model_id"] == "sidecar pepper.civitai.info"
		}},
		{"a1111-card", ".json", `{"description": "a witch", "sd version": "SDXL", "activation text": "pepper, witch hat", "preferred weight": 0.8, "modelId": 99}`, func(in Info) bool {
			return in.Description == "a witch" && reflect.DeepEqual(in.Triggers, []string{"pepper", "witch hat"}) &&
				in.TriggerDetails[0].Source == "sidecar pepper.json activation text" && in.BaseModel == "SDXL" && in.CivitAI.ModelID == 99 &&
				in.PreferredWeight != nil && *in.PreferredWeight == 0.8 && in.Sources["preferred_weight"] == "sidecar pepper.json"
		}},
		// the page it was downloaded from, pasted into the card's notes; 0 is the web UI's "no preferred weight"
		{"a1111-card-notes", ".json", `{"notes": "from https://civitai.com/models/1234/pepper?modelVersionId=5678 , v2", "preferred weight": 0}`, func(in Info) bool {
			return in.CivitAI == CivitAI{1234, 5678} && in.Sources["civitai.version_id"] == "sidecar pepper.json notes" &&
				in.CivitAI.URL() == "https://civitai.com/models/1234?modelVersionId=5678" && in.PreferredWeight == nil
		}},
		{"lora-manager", ".metadata.json", `{"model_name": "Pepper LM", "base_model": "Illustrious", "sha256": "ab", "civitai": {"id": 11, "modelId": 22, "trainedWords": ["x"]}}`, func(in Info) bool {
			return in.Name == "Pepper LM" && in.BaseModel == "Illustrious" && in.CivitAI == CivitAI{22, 11} &&
				reflect.DeepEqual(in.Triggers, []string{"x"}) && in.TriggerDetails[0].Source == "sidecar pepper.metadata.json civitai.trainedWords"
		}},
		{"api-info", ".api_info.json", `{"id": 77, "name": "Pepper API", "creator": {"username": "maker"}, "modelVersions": []}`, func(in Info) bool {
			return in.Name == "Pepper API" && in.CivitAI.ModelID == 77 && in.Author == "maker"
		}},
		{"empty", ".civitai.info", `{}`, func(in Info) bool { return in.Name == "pepper_v2" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := map[string]string{}
			if c.ext != "" {
				sc[c.ext] = c.body
			}
			in, fs := infoOf(t, writeModel(t, kohyaSDXL(meta), sc))
			if len(fs) != 0 {
				t.Errorf("findings: %+v", fs)
			}
			if !c.check(in) {
				t.Errorf("info: %+v", in)
			}
		})
	}
}

func TestInfoBadSidecars(t *testing.T) {
	for name, sc := range map[string]map[string]string{
		"not JSON":    {".civitai.info": `{"id": 1,`},
		"array":       {".json": `[1, 2]`},
		"wrong types": {".civitai.info": `{"trainedWords": 5, "model": "x", "modelId": "not a number"}`},
		"wrong card":  {".json": `{"activation text": ["a"], "description": 3}`},
	} {
		t.Run(name, func(t *testing.T) {
			in, fs := infoOf(t, writeModel(t, kohyaSDXL(nil), sc))
			if len(fs) == 0 || fs[0].Code != canon.CodeBadSidecar {
				t.Errorf("no bad-sidecar finding: %+v", fs)
			}
			if in.Name != "pepper" || in.Kind != "lora" {
				t.Errorf("a bad sidecar broke the info: %+v", in)
			}
		})
	}
	// Huge: over the limit, reported, not read. The file is sparse.
	path := writeModel(t, kohyaSDXL(nil), nil)
	huge := strings.TrimSuffix(path, ".safetensors") + ".civitai.info"
	if err := os.WriteFile(huge, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxSidecar+1); err != nil {
		t.Fatal(err)
	}
	if _, fs := infoOf(t, path); len(fs) != 1 || !strings.Contains(fs[0].Message, "more than") {
		t.Errorf("huge sidecar: %+v", fs)
	}
}

func TestInfoMetadataConventions(t *testing.T) {
	f := kohyaSDXL([]stfile.KV{{Key: "ssmd_display_name", Value: "Pepper (display)"}, {Key: "ssmd_keywords", Value: "pepper, witch"},
		{Key: "ssmd_source", Value: "https://civitai.com/models/1234/pepper?modelVersionId=5678"}, {Key: "ss_network_dim", Value: "16"},
		{Key: "modelspec.trigger_phrase", Value: "carrot"}, {Key: "ssmd_author", Value: "me"}})
	in, fs := infoOf(t, writeModel(t, f, nil))
	if in.Name != "Pepper (display)" || !reflect.DeepEqual(in.Triggers, []string{"pepper", "witch", "carrot"}) ||
		in.CivitAI != (CivitAI{1234, 5678}) || in.Author != "me" {
		t.Errorf("info: %+v", in)
	}
	if len(fs) != 1 || fs[0].Code != canon.CodeRankMismatch || !strings.Contains(fs[0].Message, "rank 16 but the tensors have rank 32") {
		t.Errorf("rank mismatch not found: %+v", fs)
	}
}

func TestInfoKinds(t *testing.T) {
	ts := func(specs ...any) stfile.File {
		var f stfile.File
		for i := 0; i < len(specs); i += 2 {
			f.Tensors = append(f.Tensors, stfile.Tensor{Name: specs[i].(string), DType: "F16", Shape: specs[i+1].([]uint64)})
		}
		return f
	}
	cases := []struct {
		name   string
		f      stfile.File
		kind   Kind
		naming Naming
		family Family
		rank   int
	}{
		{"sd1 kohya", ts("lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight", []uint64{8, 768},
			"lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn2_to_k.lora_up.weight", []uint64{320, 8}), "lora", "kohya", "sd1", 8},
		{"sd2 diffusers", ts("unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.to_k.lora.down.weight", []uint64{4, 1024}), "lora", "diffusers", "sd2", 4},
		// kohya names SD 1.x/2.x UNet blocks so (SDXL's are input_blocks…): no width to tell, the names say sd1
		{"locon", ts("lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight", []uint64{16, 320, 3, 3}), "locon", "kohya", "sd1", 16},
		// … and a text encoder of 23 layers says sd2
		{"locon sd2", ts("lora_unet_down_blocks_0_resnets_0_conv1.lora_down.weight", []uint64{16, 320, 3, 3},
			"lora_te_text_model_encoder_layers_22_mlp_fc1.lora_down.weight", []uint64{16, 1024, 1, 1}), "locon", "kohya", "sd2", 16},
		{"loha", ts("lora_unet_x.hada_w1_a", []uint64{320, 4}, "lora_unet_x.hada_w1_b", []uint64{4, 320}), "loha", "kohya", "unknown", 4},
		{"lokr", ts("lora_unet_x.lokr_w1", []uint64{4, 4}, "lora_unet_x.lokr_w2", []uint64{80, 80}), "lokr", "kohya", "unknown", 0},
		{"flux", ts("lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight", []uint64{16, 3072}), "lora", "kohya", "flux", 16},
		{"peft llm", ts("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", []uint64{8, 4096},
			"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", []uint64{4096, 8}), "lora", "peft", "llm", 8},
		{"textual inversion sd1", ts("emb_params", []uint64{4, 768}), "textual-inversion", "a1111", "sd1", 0},
		{"textual inversion sdxl", ts("clip_l", []uint64{4, 768}, "clip_g", []uint64{4, 1280}), "textual-inversion", "a1111", "sdxl", 0},
		{"sd1 checkpoint", ts("model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight", []uint64{320, 768}), "checkpoint", "ldm", "sd1", 0},
		{"llm checkpoint", ts("model.layers.0.self_attn.q_proj.weight", []uint64{64, 64}, "lm_head.weight", []uint64{100, 64}), "checkpoint", "transformers", "llm", 0},
	}
	for _, c := range cases {
		m := canon.ReadBytes(c.name, c.f.Build())
		in := Derive(m, nil, c.name)
		if in.Kind != c.kind || in.Naming != c.naming || in.Family != c.family || in.Rank != c.rank {
			t.Errorf("%s: kind %s naming %s family %s rank %d; want %s %s %s %d", c.name, in.Kind, in.Naming, in.Family, in.Rank, c.kind, c.naming, c.family, c.rank)
		}
	}
}

// TestInfoRealAdapters: the real PEFT and MLX adapters in the shared corpus.
func TestInfoRealAdapters(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "real")
	for file, want := range map[string][4]string{
		"peft-results_glue-adapter_model.safetensors": {"peft-adapter", "peft", "unknown", "0"},
		"mlx-examples-0000100_adapters.safetensors":   {"lora", "mlx", "llm", "8"},
	} {
		src, st, err := canon.OpenRegular(filepath.Join(dir, file), os.O_RDONLY)
		if err != nil {
			t.Skipf("real corpus not found: %v", err)
		}
		m, err := canon.Read(src, st.Size(), src.Name())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		in := Derive(m, nil, file)
		got := [4]string{string(in.Kind), string(in.Naming), string(in.Family), strconv.Itoa(in.Rank)}
		if got != want {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
}

// FuzzDeriveInfo: metadata values and tensor names from a file never break the LoRA info.
func FuzzDeriveInfo(f *testing.F) {
	f.Add("ss_tag_frequency", `{"10_a b": {"x": 1}}`, "lora_unet_a.lora_down.weight", "https://civitai.com/models/1?modelVersionId=2")
	f.Add("ss_dataset_dirs", `{"x": []}`, "emb_params", "::")
	f.Add("<s1>", "<embed>", "<s1>", "")
	f.Add("ss_network_dim", "4", "x.lokr_w2_a", "")
	f.Fuzz(func(t *testing.T, key, value, name, source string) {
		m := &canon.Model{Metadata: []canon.MetaEntry{{Key: key, Value: value}, {Key: "ssmd_source", Value: source}},
			Tensors: []tensor.Tensor{{Name: name, DType: "F16", Shape: []uint64{4, 8}}}}
		in := Derive(m, nil, "x.safetensors")
		if in.Kind == "" || in.Naming == "" || in.Family == "" || in.Triggers == nil || in.GuessedTriggers == nil ||
			len(in.TriggerDetails) != len(in.Triggers)+len(in.GuessedTriggers) {
			t.Fatalf("incomplete info: %+v", in)
		}
	})
}

// TestKeyTables: every key a trainer embeds a hash in changes with the weights, so it is volatile.
func TestKeyTables(t *testing.T) {
	volatile := map[string]bool{}
	for _, k := range VolatileKeys {
		volatile[k] = true
	}
	for _, k := range EmbeddedHashKeys {
		if !volatile[k.Key] {
			t.Errorf("%s is not among VolatileKeys", k.Key)
		}
	}
}

// TestInfoJSON: the JSON names writers and scripts read; triggers and guessed_triggers are lists, never
// null.
func TestInfoJSON(t *testing.T) {
	in := deriveBytes("x.safetensors", tensors("x", []uint64{1}))
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"triggers":[]`, `"guessed_triggers":[]`, `"trigger_details":[]`, `"kind":"unknown"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s not in %s", want, b)
		}
	}
	in.TargetModules, in.EmbeddedTokens = []string{"q_proj"}, []string{"pepper"}
	b, _ = json.Marshal(in)
	for _, want := range []string{`"target_modules":["q_proj"]`, `"embedded_tokens":["pepper"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s not in %s", want, b)
		}
	}
}

// TestTriggerGroups: declared words and guesses are kept apart, and every word is credited to the
// source it came from, so a writer can show "pepper, witch (sidecar …civitai.info trainedWords)" and
// "hat (sidecar ….json activation text)" instead of crediting every word to the first source.
func TestTriggerGroups(t *testing.T) {
	meta := []stfile.KV{{Key: "ssmd_keywords", Value: "witch, carrot"}, {Key: "ss_tag_frequency", Value: `{"10_pepper witch": {"hat": 40, "pepper": 30}}`}}
	path := writeModel(t, kohyaSDXL(meta), map[string]string{
		".civitai.info": `{"trainedWords": ["pepper, witch"]}`,
		".json":         `{"activation text": "hat, Pepper"}`,
	})
	in, fs := infoOf(t, path)
	if len(fs) != 0 {
		t.Errorf("findings: %+v", fs)
	}
	if !reflect.DeepEqual(in.Triggers, []string{"pepper", "witch", "hat", "carrot"}) || !reflect.DeepEqual(in.GuessedTriggers, []string{"pepper witch"}) {
		t.Errorf("triggers %q guessed %q", in.Triggers, in.GuessedTriggers)
	}
	want := []TriggerGroup{
		{Source: "sidecar pepper.civitai.info trainedWords", Words: []string{"pepper", "witch"}},
		{Source: "sidecar pepper.json activation text", Words: []string{"hat"}},
		{Source: "metadata ssmd_keywords", Words: []string{"carrot"}},
		{Source: "folder name 10_pepper witch", Derived: true, Words: []string{"pepper witch"}},
	}
	if got := in.TriggerGroups(); !reflect.DeepEqual(got, want) {
		t.Errorf("groups:\n got %+v\nwant %+v", got, want)
	}
	if len(in.TriggerDetails) != len(in.Triggers)+len(in.GuessedTriggers) {
		t.Errorf("details %d, triggers %d + guessed %d", len(in.TriggerDetails), len(in.Triggers), len(in.GuessedTriggers))
	}
}

// TestPEFTConfigSidecar: PEFT's adapter_config.json beside adapter_model.safetensors gives the base
// model, the method, the declared rank and alpha and the target modules, each with its source; it
// belongs to that file name only.
func TestPEFTConfigSidecar(t *testing.T) {
	adapter := tensors(peftQ+".lora_A.weight", []uint64{8, 4096}, peftQ+".lora_B.weight", []uint64{4096, 8})
	config := `{"peft_type": "LORA", "base_model_name_or_path": "meta-llama/Llama-2-7b-hf", "r": 8, "lora_alpha": 16,
		"target_modules": ["v_proj", "q_proj"], "task_type": "CAUSAL_LM"}`
	dir := t.TempDir()
	path := writeFiles(t, dir, "adapter_model.safetensors", adapter, map[string]string{"adapter_config.json": config})
	in, fs := infoOf(t, path)
	if len(fs) != 0 {
		t.Errorf("findings: %+v", fs)
	}
	src := "sidecar adapter_config.json"
	if in.BaseModel != "meta-llama/Llama-2-7b-hf" || in.NetworkModule != "LORA" || in.DeclaredRank != "8" || in.DeclaredAlpha != "16" ||
		!reflect.DeepEqual(in.TargetModules, []string{"q_proj", "v_proj"}) || in.Kind != KindLoRA || in.Naming != NamingPEFT || in.Rank != 8 {
		t.Errorf("info: %+v", in)
	}
	for _, field := range []string{"base_model", "network_module", "declared_rank", "declared_alpha", "target_modules"} {
		if in.Sources[field] != src {
			t.Errorf("source of %s: %q", field, in.Sources[field])
		}
	}

	// A rank the tensors contradict; target_modules as one regular expression; alpha a fraction.
	dir = t.TempDir()
	path = writeFiles(t, dir, "adapter_model.safetensors", adapter,
		map[string]string{"adapter_config.json": `{"r": 16, "lora_alpha": 0.5, "target_modules": ".*(q|v)_proj"}`})
	in, fs = infoOf(t, path)
	if len(fs) != 1 || fs[0].Code != canon.CodeRankMismatch || fs[0].Message != "adapter_config.json r says rank 16 but the tensors have rank 8" {
		t.Errorf("findings: %+v", fs)
	}
	if in.DeclaredAlpha != "0.5" || !reflect.DeepEqual(in.TargetModules, []string{".*(q|v)_proj"}) {
		t.Errorf("info: %+v", in)
	}

	// Wrong types are findings; the rest of the config still counts.
	dir = t.TempDir()
	path = writeFiles(t, dir, "adapter_model.safetensors", adapter,
		map[string]string{"adapter_config.json": `{"r": "8", "target_modules": [1], "base_model_name_or_path": "m"}`})
	in, fs = infoOf(t, path)
	if len(fs) != 2 || fs[0].Code != canon.CodeBadSidecar || !strings.Contains(fs[0].Message, "r is not a number") ||
		!strings.Contains(fs[1].Message, "target_modules is not a list of names") || in.BaseModel != "m" || in.TargetModules != nil {
		t.Errorf("findings %+v info %+v", fs, in)
	}

	// Another model in the same folder does not take PEFT's config for its own.
	dir = t.TempDir()
	path = writeFiles(t, dir, "other.safetensors", adapter, map[string]string{"adapter_config.json": config})
	if in, _ := infoOf(t, path); in.BaseModel != "" || in.DeclaredRank != "" {
		t.Errorf("config taken by other.safetensors: %+v", in)
	}
}

// TestNormalBase: the ways trainers, sidecars and hubs spell a base model come to one name.
func TestNormalBase(t *testing.T) {
	for in, want := range map[string]string{
		"sd_v1": "SD 1.5", "SD 1.5": "SD 1.5", "runwayml/stable-diffusion-v1-5": "SD 1.5", "v1-5-pruned-emaonly": "SD 1.5",
		"sdxl_base_v1-0": "SDXL", "SDXL 1.0": "SDXL", "stabilityai/stable-diffusion-xl-base-1.0": "SDXL",
		"Pony": "Pony", "ponyDiffusionV6XL": "Pony", "Illustrious": "Illustrious", "NoobAI": "NoobAI",
		"Flux.1 D": "Flux", "black-forest-labs/FLUX.1-dev": "Flux", "SD 2.1": "SD 2", "stabilityai/stable-diffusion-2-1": "SD 2",
		"SD 3.5": "SD 3", "  my own  ": "my own", "": "", "Wan Video": "Wan", "Swan Lake": "Swan Lake",
	} {
		if got := NormalBase(in); got != want {
			t.Errorf("NormalBase(%q) = %q, want %q", in, got, want)
		}
	}
}
