package main

import (
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// helpEnd is implemented by every command: the end of its --help, after kong's flags, and of its page
// (docs/<command>.md, made from the same model by TestDocs).
type helpEnd interface {
	helpEnd() commandHelp
}

// commandHelp is what a command's help says after kong's flags: its examples and its exit statuses.
type commandHelp struct {
	exits    string    // the exit statuses, broken into lines of at most 80 characters
	examples []example // in the order they are shown
}

// An example is one of a command's examples: what it shows, and the command line. The examples live
// here only: --help and the command's page show them, and TestDocs parses every one (and runs those it
// can against the fixtures), so they cannot rot.
type example struct{ what, line string }

// printHelp is kong's help, then, unless only a summary is asked for (after a usage error), the end
// of the command's help (or, for the overview, of stdiff's): examples, exit statuses, what a model
// may be.
func printHelp(opt kong.HelpOptions, kctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(opt, kctx); err != nil || opt.Summary {
		return err
	}
	var end helpEnd = overviewHelp{}
	if cmd := kctx.Selected(); cmd != nil {
		end, _ = cmd.Target.Addr().Interface().(helpEnd)
	}
	if end == nil {
		return nil
	}
	_, err := io.WriteString(kctx.Stdout, "\n"+helpText(end.helpEnd()))
	return err
}

// modelHelp says what a model may be, at the end of every command's help.
const modelHelp = "MODEL may be a safetensors, GGUF, PyTorch (.bin, .pt, .ckpt, a pickle), NumPy\n(.npy, .npz) or ONNX file, a folder holding one model (save_pretrained, PEFT,\na diffusers component), a shard set (index, folder or any shard), a diffusers\npipeline (its folder, or a .dduf file), an http(s) URL or\nhf://ORG/REPO[@REV][/PATH] (HF_ENDPOINT, HF_TOKEN).\n"

// helpText is the end of a command's help: examples, the exit statuses, and what a model may be.
func helpText(h commandHelp) string {
	var b strings.Builder
	b.WriteString("Examples:\n")
	for _, e := range h.examples {
		b.WriteString("  # " + e.what + "\n  " + e.line + "\n")
	}
	return b.String() + "\nExit status: " + h.exits + ".\n\n" + modelHelp
}

type overviewHelp struct{}

func (overviewHelp) helpEnd() commandHelp {
	return commandHelp{"0 identical / valid / nothing found, 1 different / invalid /\nduplicates found, 2 trouble", []example{
		{"what changed between two models, and how much the weights moved", "stdiff old.safetensors new.safetensors"},
		{"is every file loadable by strict readers?", "stdiff check *.safetensors"},
		{"the help of a command", "stdiff help diff"}}}
}

func (*diffCmd) helpEnd() commandHelp {
	return commandHelp{"0 identical (or equal within --atol/--rtol), 1 different (with\n--fail-on: a category listed occurred, or the reference verdict changed\nunless -verdict is listed), 2 trouble (usage error, unreadable model, a\npattern that matches nothing)", []example{
		{"what changed, and how much the weights moved", "stdiff old.safetensors new.safetensors"},
		{"a release gate: fail on a new shape or dtype, or NaN, allow weight updates", "stdiff -q --fail-on shape,dtype,nan old.safetensors new.safetensors"},
		{"what requantising a GGUF model changed: tensor types, metadata, tokens", "stdiff model-Q4_K_M.gguf model-Q6_K.gguf"},
		{"a faithful conversion passes: dtypes may change, values only by exact rounding", "stdiff --fail-on=-dtype ./hf-model model-f16.gguf"},
		{"structure and metadata only (instant), as JSON", "stdiff --header-only --json ./model hf://org/model@main"}}}
}

func (*checkCmd) helpEnd() commandHelp {
	return commandHelp{"0 every model valid, 1 a model the reference reader rejects, 2\ntrouble (usage error, unreadable model, a repair refused or failed)", []example{
		{"the reference reader's verdict and every defect found", "stdiff check model.safetensors"},
		{"repair a NUL-padded header in place", "stdiff check --fix model.safetensors"},
		{"every tensor's values too: NaN, Inf, untrained (zero) LoRA weights", "stdiff check --values lora.safetensors"}}}
}

func (*inspectCmd) helpEnd() commandHelp {
	return commandHelp{"0 fine, 1 a model the reference reader rejects, 2 trouble (usage\nerror, unreadable model)", []example{
		{"what a model is: name, triggers, base model, kind, rank, metadata", "stdiff inspect lora.safetensors"},
		{"a folder as a table, one row per model", "stdiff inspect --short ~/loras"},
		{"a GGUF model: quantisation mix, hyperparameters, tokenizer, chat template", "stdiff inspect model-Q4_K_M.gguf"},
		{"every tensor and every metadata value, whole", "stdiff inspect --full model.safetensors"}}}
}

func (*hashCmd) helpEnd() commandHelp {
	return commandHelp{"0 every ID computed (with --check: every file matches), 1 a model\nthe reference reader rejects or a file that does not match, 2 trouble", []example{
		{"structure IDs, from the headers", "stdiff hash *.safetensors"},
		{"a manifest with every hash, then verify it", "stdiff hash --all *.safetensors > SUMS && stdiff hash --check SUMS"},
		{"verify what sha256sum or b3sum wrote", "stdiff hash --check SHA256SUMS; stdiff hash --kind blake3 --check B3SUMS"}}}
}

func (*dupesCmd) helpEnd() commandHelp {
	return commandHelp{"0 no duplicates, 1 duplicates found, 2 trouble (usage error,\nunreadable path); with --delete or --link: 0 done, 1 copies left alone", []example{
		{"duplicates under a folder, each group's copy to keep and why", "stdiff dupes ~/loras"},
		{"delete every copy but the one kept (asks first; --dry-run shows)", "stdiff dupes --delete --keep path:$HOME/loras/library ~/loras"},
		{"the copies to delete, for xargs", "stdiff dupes --print-deletable -0 ~/loras | xargs -0 ls -l"},
		{"copies among ollama's models and downloaded GGUF files", "stdiff dupes ~/.ollama/models/blobs ~/Downloads"}}}
}

func (*snapshotCmd) helpEnd() commandHelp {
	return commandHelp{"0 written (a model the reference reader rejects too: its verdict is\nrecorded), 2 trouble (usage error, unreadable model, output not written)", []example{
		{"a release's snapshot: diff, inspect and hash --check take it for the model", "stdiff snapshot ./model -o model.snap"},
		{"which tensors changed since, and how their value summaries moved", "stdiff diff model.snap ./model"}}}
}
