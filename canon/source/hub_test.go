package source_test

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/source/hubtest"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/hash"
)

// modelOf is a safetensors file of F32 tensors of the given names, each of shape [2, dim], with
// metadata format=pt.
func modelOf(seed int64, dim uint64, names ...string) []byte {
	f := stfile.File{Seed: seed, Metadata: []stfile.KV{{Key: "format", Value: "pt"}}}
	for _, n := range names {
		f.Tensors = append(f.Tensors, stfile.Tensor{Name: n, DType: "F32", Shape: []uint64{2, dim}})
	}
	return f.Build()
}

// writeTree writes files (slash-separated paths) under root.
func writeTree(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for p, b := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pipelineFiles is a small diffusers pipeline: a text encoder in one file (and an fp16 variant beside
// it), a unet in two shards with their index, a VAE in one file, a scheduler and a tokenizer without
// weights, and a safety checker the pipeline goes without. unetDim sets the unet's shapes.
func pipelineFiles(unetDim uint64) map[string][]byte {
	return map[string][]byte{
		"model_index.json": []byte(`{"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.30.0",
			"safety_checker": [null, null], "scheduler": ["diffusers", "PNDMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
			"tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"], "vae": ["diffusers", "AutoencoderKL"],
			"requires_safety_checker": true}`),
		"text_encoder/config.json":            []byte(`{}`),
		"text_encoder/model.safetensors":      modelOf(1, 4, "text_model.embeddings.weight", "text_model.final_layer_norm.weight"),
		"text_encoder/model.fp16.safetensors": modelOf(9, 4, "other"),
		"unet/diffusion_pytorch_model.safetensors.index.json": []byte(`{"metadata": {}, "weight_map": {
			"conv_in.weight": "diffusion_pytorch_model-00001-of-00002.safetensors", "conv_out.weight": "diffusion_pytorch_model-00002-of-00002.safetensors"}}`),
		"unet/diffusion_pytorch_model-00001-of-00002.safetensors": modelOf(2, unetDim, "conv_in.weight"),
		"unet/diffusion_pytorch_model-00002-of-00002.safetensors": modelOf(3, 4, "conv_out.weight"),
		"vae/diffusion_pytorch_model.safetensors":                 modelOf(4, 4, "decoder.conv_in.weight"),
		"scheduler/scheduler_config.json":                         []byte(`{}`),
		"tokenizer/vocab.json":                                    []byte(`{}`),
		"sd-v1.safetensors":                                       modelOf(5, 4, "model.diffusion_model.x"),
	}
}

// fakeHub serves a Hub with org/sd (a pipeline at main and at v2, its unet reshaped), org/lora (one
// LoRA file and a README), org/many (three models), org/empty (no model) under root.
func fakeHub(t *testing.T) (*hubtest.Hub, string, source.Options) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "org/sd/main"), pipelineFiles(4))
	writeTree(t, filepath.Join(root, "org/sd/v2"), pipelineFiles(8))
	writeTree(t, filepath.Join(root, "org/lora/main"), map[string][]byte{
		"README.md": []byte("# a LoRA"), "pytorch_lora_weights.safetensors": modelOf(6, 4, "unet.a.lora_A.weight", "unet.a.lora_B.weight")})
	writeTree(t, filepath.Join(root, "org/many/main"), map[string][]byte{
		"a.safetensors": modelOf(7, 4, "x"), "sub/b.safetensors": modelOf(7, 4, "x"),
		"c-00001-of-00002.safetensors": modelOf(7, 4, "x"), "c-00002-of-00002.safetensors": modelOf(7, 4, "y")})
	writeTree(t, filepath.Join(root, "org/empty/main"), map[string][]byte{"README.md": []byte("nothing")})
	hub := &hubtest.Hub{Root: root}
	srv := httptest.NewServer(hub)
	t.Cleanup(srv.Close)
	return hub, root, source.Options{Endpoint: srv.URL, Token: "secret"}
}

// TestHubPipeline: a diffusers pipeline on the Hub, named by its repository alone, is one model made
// of its components, listed through the tree API page by page (with the token: the endpoint is
// loopback); the same folder on disk is the same model, byte for byte.
func TestHubPipeline(t *testing.T) {
	hub, root, opt := fakeHub(t)
	o, err := source.Open(t.Context(), "hf://org/sd", opt)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	m := o.Model
	var names []string
	for i := range m.Tensors {
		names = append(names, m.Tensors[i].Name)
	}
	want := []string{"text_encoder/text_model.embeddings.weight", "text_encoder/text_model.final_layer_norm.weight",
		"unet/conv_in.weight", "unet/conv_out.weight", "vae/decoder.conv_in.weight"}
	if !slices.Equal(names, want) {
		t.Errorf("tensors %q, want %q", names, want)
	}
	wantShards := []string{"text_encoder/model.safetensors", "text_encoder/model.safetensors", "unet/diffusion_pytorch_model-00001-of-00002.safetensors",
		"unet/diffusion_pytorch_model-00002-of-00002.safetensors", "vae/diffusion_pytorch_model.safetensors"}
	if got := m.TensorShards(); !slices.Equal(got, wantShards) {
		t.Errorf("shards %q, want %q", got, wantShards)
	}
	if v, ok := m.Meta("unet/format"); !ok || v != "pt" {
		t.Errorf("metadata %+v", m.Metadata)
	}
	if len(m.Findings) != 1 || m.Findings[0].Code != canon.CodePipeline || m.Findings[0].Message != "a diffusers pipeline (StableDiffusionPipeline) read as one model, component by component: "+
		"text_encoder (model.safetensors), unet (diffusion_pytorch_model.safetensors.index.json), vae (diffusion_pytorch_model.safetensors); without .safetensors weights: scheduler, tokenizer" {
		t.Errorf("findings %+v", m.Findings)
	}
	pages, token := 0, true
	for _, a := range hub.Asked() {
		if strings.HasPrefix(a, "/api/models/org/sd/tree/main?") {
			pages++
			token = token && strings.HasSuffix(a, " Bearer secret")
		}
	}
	if pages < 5 || !token {
		t.Errorf("%d pages of the listing asked for (token on each: %v); asked %q", pages, token, hub.Asked())
	}

	local, err := source.Open(t.Context(), filepath.Join(root, "org/sd/main"), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	remoteID, localID := contentID(t, o), contentID(t, local)
	if remoteID != localID || canon.StructureID(o.Model) != canon.StructureID(local.Model) {
		t.Errorf("the pipeline on the Hub and on disk differ: %s, %s", remoteID, localID)
	}
	// The VAE's tensor reads the VAE's bytes.
	vae, err := source.Open(t.Context(), filepath.Join(root, "org/sd/main/vae/diffusion_pytorch_model.safetensors"), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer vae.Close()
	dv, _ := hash.TensorDigests(t.Context(), vae.Source, vae.Model, hash.Options{})
	dp, _ := hash.TensorDigests(t.Context(), local.Source, local.Model, hash.Options{})
	if dv[0] != dp[4] {
		t.Error("the pipeline's vae/decoder.conv_in.weight is not the VAE file's tensor")
	}
	// Naming the model_index.json is naming the pipeline.
	named, err := source.Open(t.Context(), filepath.Join(root, "org/sd/main/model_index.json"), source.Options{})
	if err != nil || canon.StructureID(named.Model) != canon.StructureID(local.Model) {
		t.Errorf("model_index.json: %v", err)
	}
	named.Close()
}

func contentID(t *testing.T, o *source.Opened) string {
	t.Helper()
	d, err := hash.Digests(t.Context(), o, hash.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return canon.ContentID(o.Model, d)
}

// TestHubRepositories: a repository without model.safetensors opens its only model (a LoRA); with
// several, or none, the error lists what is there and how to name one; a repository or a revision the
// Hub does not have is said so; an endpoint without the tree API still finds an index, as before.
func TestHubRepositories(t *testing.T) {
	hub, _, opt := fakeHub(t)
	o, err := source.Open(t.Context(), "hf://org/lora", opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Model.Tensors) != 2 || !strings.HasSuffix(o.Model.Name, "/org/lora/resolve/main/pytorch_lora_weights.safetensors") {
		t.Errorf("the LoRA repository opened %s, %d tensors", o.Model.Name, len(o.Model.Tensors))
	}
	o.Close()
	for spec, want := range map[string]struct{ err, hint string }{
		"hf://org/many": {"the repository holds 3 models, and no model.safetensors: a.safetensors, c-00001-of-00002.safetensors, sub/b.safetensors",
			"name one: hf://org/many/a.safetensors"},
		"hf://org/many@main/": {"the repository holds 3 models", "name one: hf://org/many@main/a.safetensors"},
		"hf://org/empty":      {"the repository has no .safetensors or .gguf file (README.md)", "stdiff reads .safetensors and .gguf files"},
		"hf://org/nope":       {"the Hub has no repository org/nope (or it is private or gated", "check ORG/REPO"},
		"hf://org/lora@v9":    {"the repository org/lora has no revision v9", "check the revision"},
		"hf://org/lora@v9/pytorch_lora_weights.safetensors": {"HTTP 404 Not Found: no such revision", "check the revision"},
		"hf://org/lora/nothing.safetensors":                 {"HTTP 404 Not Found: no such file in the repository", "check the URL"},
	} {
		_, err := source.Open(t.Context(), spec, opt)
		var re *canon.ReadError
		if !errors.As(err, &re) || !strings.Contains(re.Reason(), want.err) || !strings.HasPrefix(re.Hint, want.hint) {
			t.Errorf("%s: %v (hint %q), want %q with hint %q…", spec, err, hintOf(err), want.err, want.hint)
		}
	}
	var he *source.HTTPError
	if _, err := source.Open(t.Context(), "hf://org/lora@v9", opt); !errors.As(err, &he) || he.Code != source.HubRevisionNotFound {
		t.Errorf("the Hub's code is not in the error: %v", err)
	}

	hub.NoAPI = true
	if _, err := source.Open(t.Context(), "hf://org/lora", opt); err == nil || !strings.Contains(err.Error(), "neither model.safetensors nor model.safetensors.index.json, and the endpoint lists no files") {
		t.Errorf("without the tree API: %v", err)
	}
}

func hintOf(err error) string {
	var re *canon.ReadError
	if errors.As(err, &re) {
		return re.Hint
	}
	return ""
}

// TestLocalPipelineEdges: a component whose weights are several variants and none without is not
// read (a warning says so and how to name one); a pipeline without .safetensors weights, or with a
// component name that is not a folder beside it, is an error.
func TestLocalPipelineEdges(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"model_index.json": []byte(`{"_class_name": "P", "unet": ["diffusers", "U"], "vae": ["diffusers", "V"]}`),
		"unet/diffusion_pytorch_model.fp16.safetensors":    modelOf(1, 4, "a"),
		"unet/diffusion_pytorch_model.non_ema.safetensors": modelOf(1, 4, "a"),
		"vae/diffusion_pytorch_model.fp16.safetensors":     modelOf(2, 4, "b"), // the only one: read
	})
	o, err := source.Open(t.Context(), dir, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if len(o.Model.Tensors) != 1 || o.Model.Tensors[0].Name != "vae/b" {
		t.Errorf("tensors %+v", o.Model.Tensors)
	}
	var warned bool
	for _, f := range o.Model.Findings {
		warned = warned || (f.Code == canon.CodePipelineComponent && f.Severity == finding.SevWarning &&
			f.Message == "unet has several weight files and none saved without a variant (diffusion_pytorch_model.fp16.safetensors, diffusion_pytorch_model.non_ema.safetensors): not read")
	}
	if !warned {
		t.Errorf("findings %+v", o.Model.Findings)
	}
	for index, want := range map[string]string{
		`{"_class_name": "P", "unet": ["diffusers", "U"]}`:  "is a diffusers pipeline (P) without .safetensors weights",
		`{"_class_name": "P", "..": ["diffusers", "U"]}`:    `component name ".." is not a folder beside the file`,
		`{"_class_name": "P", "a/b": ["diffusers", "U"]}`:   `component name "a/b" is not a folder beside the file`,
		`["not", "an", "object"]`:                           "not a diffusers model_index.json",
		`{"_class_name": "P", "unet": ["diffusers", null]}`: "is a diffusers pipeline (P) without .safetensors weights",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string][]byte{"model_index.json": []byte(index), "unet/model.safetensors.bin": []byte("x")})
		if o, err := source.Open(t.Context(), dir, source.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", index, err, want)
			if err == nil {
				o.Close()
			}
		}
	}
}

// TestLocalPipelineMissingBlob: in the Hugging Face cache a component's weights are a link to a blob;
// a blob that is not there leaves the component missing: a shard with Missing set and a
// missing-component error naming its file and the link, the other components read; hash.Run gives no
// structure ID.
func TestLocalPipelineMissingBlob(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string][]byte{
		"snap/model_index.json": []byte(`{"_class_name": "P", "unet": ["diffusers", "U"], "vae": ["diffusers", "V"]}`),
		"blobs/b1":              modelOf(2, 4, "b"),
	})
	for comp, blob := range map[string]string{"unet": "b0", "vae": "b1"} {
		os.Mkdir(filepath.Join(dir, "snap", comp), 0o755)
		if err := os.Symlink("../../blobs/"+blob, filepath.Join(dir, "snap", comp, "diffusion_pytorch_model.safetensors")); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	o, err := source.Open(t.Context(), filepath.Join(dir, "snap"), source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := o.Model
	o.Close()
	if len(m.Tensors) != 1 || m.Tensors[0].Name != "vae/b" || !slices.Equal(m.MissingShards(), []string{"unet/diffusion_pytorch_model.safetensors"}) {
		t.Errorf("tensors %+v, missing %q", m.Tensors, m.MissingShards())
	}
	var found bool
	for _, f := range m.Findings {
		found = found || f.Code == canon.CodeMissingComponent && f.Severity == finding.SevError &&
			f.Message == "unet/diffusion_pytorch_model.safetensors is missing (a link to ../../blobs/b0, which is not there): the tensors of component unet are unknown"
	}
	if !found {
		t.Errorf("findings %+v", m.Findings)
	}
	r := hash.Run(t.Context(), []string{filepath.Join(dir, "snap")}, hash.Options{})
	if f := r.Files[0]; f.StructureID != "" || f.HeaderErr == nil || r.Outcome() != canon.Found {
		t.Errorf("hash: %+v", f)
	}
}
