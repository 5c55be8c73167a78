package inspect

import (
	"bufio"
	"fmt"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// CompanionFile is one of the files a loader reads beside a folder model's tensors (package
// companion: config.json, the tokenizer's files, chat templates, adapter_config.json…), as the card
// lists it.
type CompanionFile struct {
	// Path is the file's path relative to the model's folder, slash-separated ("config.json",
	// "unet/config.json").
	Path string `json:"path"`
	// Kind is how it is read and compared: "json", "text", "tokenizer" or "binary".
	Kind companion.Kind `json:"kind"`
	// Size is its size in bytes.
	Size int64 `json:"size"`
	// Digest identifies it (companion.File.Digest: of a JSON file's canonical form).
	Digest string `json:"digest"`
	// Summary is one short line of what it says where that is cheap (companion.Summary): a
	// config.json's model type and architectures, whether a tokenizer_config.json has a chat template,
	// a tokenizer.json's model and vocabulary size; "" when there is nothing short to say.
	Summary string `json:"summary"`
	// Problem says why it was not read as its kind (then compared by its digest), "" when it was.
	Problem string `json:"problem,omitempty"`
}

// companionsOf lists files as a card does.
func companionsOf(files []companion.File) []CompanionFile {
	if len(files) == 0 {
		return nil
	}
	out := make([]CompanionFile, len(files))
	for i, f := range files {
		out[i] = CompanionFile{Path: f.Path, Kind: f.Kind, Size: f.Size, Digest: f.Digest, Summary: companion.Summary(f), Problem: f.Problem}
	}
	return out
}

// writeCompanionsText writes the card's files beside the tensors: a row counting them, then a line
// per file (its path, size and summary).
func writeCompanionsText(b *bufio.Writer, c *Card, opt WriteOptions, row func(label, format string, args ...any)) {
	if len(c.Companions) == 0 {
		return
	}
	row("files", "%s beside the tensors", textfmt.Plural(len(c.Companions), "file"))
	paths := make([]string, len(c.Companions))
	for i, f := range c.Companions {
		paths[i] = textfmt.Escape(f.Path)
	}
	width := columnWidth(paths, maxKeyWidth)
	for i, f := range c.Companions {
		line := fmt.Sprintf("    %s  %9s", column(paths[i], width, opt.Full), textfmt.Bytes(uint64(f.Size)))
		if s := f.Summary; s != "" {
			if !opt.Full {
				s = textfmt.Shorten(s, 80)
			} else {
				s = textfmt.Escape(s)
			}
			if f.Problem != "" {
				s = opt.Palette.Yellow(s)
			}
			line += "  " + s
		}
		fmt.Fprintln(b, line)
	}
}

// companionRows are the Markdown card's rows of the files beside the tensors: "file" and the path,
// size and summary of each.
func companionRows(files []CompanionFile) [][2]string {
	rows := make([][2]string, 0, len(files))
	for _, f := range files {
		v := f.Path + " (" + textfmt.Bytes(uint64(f.Size)) + ")"
		if f.Summary != "" {
			v += ": " + f.Summary
		}
		rows = append(rows, [2]string{"file", v})
	}
	return rows
}
