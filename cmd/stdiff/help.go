package main

import (
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// helpEnd is implemented by every command: the end of its --help, after kong's flags.
type helpEnd interface {
	helpEnd() string
}

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
	_, err := io.WriteString(kctx.Stdout, "\n"+end.helpEnd())
	return err
}

// helpText is the end of a command's help: examples (pairs of what and the command line), the exit
// statuses (broken into lines of at most 80 characters), and what a model may be.
func helpText(exits string, examples ...string) string {
	var b strings.Builder
	b.WriteString("Examples:\n")
	for i := 0; i+1 < len(examples); i += 2 {
		b.WriteString("  # " + examples[i] + "\n  " + examples[i+1] + "\n")
	}
	return b.String() + "\nExit status: " + exits + ".\n\nMODEL may be a safetensors or GGUF file, a folder holding one model\n(save_pretrained, PEFT, a diffusers component), a shard set (index, folder or\nany shard), a diffusers pipeline (its folder), an http(s) URL or\nhf://ORG/REPO[@REV][/PATH] (HF_ENDPOINT, HF_TOKEN).\n"
}

type overviewHelp struct{}

func (overviewHelp) helpEnd() string {
	return helpText("0 identical / valid / nothing found, 1 different / invalid /\nduplicates found, 2 trouble",
		"what changed between two models, and how much the weights moved", "stdiff old.safetensors new.safetensors",
		"is every file loadable by strict readers?", "stdiff check *.safetensors",
		"the help of a command", "stdiff help diff")
}

func (*diffCmd) helpEnd() string {
	return helpText("0 identical (or equal within --atol/--rtol), 1 different (with\n--fail-on: a category listed occurred, or the reference verdict changed\nunless -verdict is listed), 2 trouble (usage error, unreadable model, a\npattern that matches nothing)",
		"what changed, and how much the weights moved", "stdiff old.safetensors new.safetensors",
		"a release gate: fail on a new shape or dtype, or NaN, allow weight updates", "stdiff -q --fail-on shape,dtype,nan old.safetensors new.safetensors",
		"what requantising a GGUF model changed: tensor types, metadata, tokens", "stdiff model-Q4_K_M.gguf model-Q6_K.gguf",
		"structure and metadata only (instant), as JSON", "stdiff --header-only --json ./model hf://org/model@main")
}

func (*checkCmd) helpEnd() string {
	return helpText("0 every model valid, 1 a model the reference reader rejects, 2\ntrouble (usage error, unreadable model, a repair refused or failed)",
		"the reference reader's verdict and every defect found", "stdiff check model.safetensors",
		"repair a NUL-padded header in place", "stdiff check --fix model.safetensors",
		"every tensor's values too: NaN, Inf, untrained (zero) LoRA weights", "stdiff check --values lora.safetensors")
}

func (*inspectCmd) helpEnd() string {
	return helpText("0 fine, 1 a model the reference reader rejects, 2 trouble (usage\nerror, unreadable model)",
		"what a model is: name, triggers, base model, kind, rank, metadata", "stdiff inspect lora.safetensors",
		"a folder as a table, one row per model", "stdiff inspect --short ~/loras",
		"a GGUF model: quantisation mix, hyperparameters, tokenizer, chat template", "stdiff inspect model-Q4_K_M.gguf",
		"every tensor and every metadata value, whole", "stdiff inspect --full model.safetensors")
}

func (*hashCmd) helpEnd() string {
	return helpText("0 every ID computed (with --check: every file matches), 1 a model\nthe reference reader rejects or a file that does not match, 2 trouble",
		"structure IDs, from the headers", "stdiff hash *.safetensors",
		"a manifest with every hash, then verify it", "stdiff hash --all *.safetensors > SUMS && stdiff hash --check SUMS",
		"verify what sha256sum or b3sum wrote", "stdiff hash --check SHA256SUMS; stdiff hash --kind blake3 --check B3SUMS")
}

func (*dupesCmd) helpEnd() string {
	return helpText("0 no duplicates, 1 duplicates found, 2 trouble (usage error,\nunreadable path); with --delete or --link: 0 done, 1 copies left alone",
		"duplicates under a folder, each group's copy to keep and why", "stdiff dupes ~/loras",
		"delete every copy but the one kept (asks first; --dry-run shows)", "stdiff dupes --delete --keep path:$HOME/loras/library ~/loras",
		"the copies to delete, for xargs", "stdiff dupes --print-deletable -0 ~/loras | xargs -0 ls -l",
		"copies among ollama's models and downloaded GGUF files", "stdiff dupes ~/.ollama/models/blobs ~/Downloads")
}

func (*snapshotCmd) helpEnd() string {
	return helpText("0 written (a model the reference reader rejects too: its verdict is\nrecorded), 2 trouble (usage error, unreadable model, output not written)",
		"a release's snapshot: diff, inspect and hash --check take it for the model", "stdiff snapshot ./model -o model.snap",
		"which tensors changed since, and how their value summaries moved", "stdiff diff model.snap ./model")
}
