package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/lora"
	"github.com/stdiff/stdiff/canon/markdown"
	"github.com/stdiff/stdiff/canon/source"
	"github.com/stdiff/stdiff/canon/textfmt"
	"github.com/stdiff/stdiff/hash"
)

type inspectCmd struct {
	Tensors bool     `help:"List every tensor (text output lists the first 10)."`
	Short   bool     `help:"One row per file (name, kind, base, rank, size, triggers); folders are searched for .safetensors files."`
	Verify  bool     `help:"Also read the data and verify the hashes embedded in the metadata (sshs_model_hash, modelspec.hash_sha256)."`
	Files   []string `arg:"" name:"PATH" help:"Model files (and with --short, folders)." type:"string"`
}

// metaJSON is metadata as a JSON object in file order.
type metaJSON []canon.MetaEntry

func (m metaJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Key)
		v, _ := json.Marshal(e.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// paramsJSON is element counts per dtype, in order of first appearance.
type paramsJSON []canon.ParamCount

func (p paramsJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(string(c.DType))
		fmt.Fprintf(&b, "%s:%d", k, c.Elements)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type tensorJSON struct {
	Name        string    `json:"name"`
	DType       string    `json:"dtype"`
	Shape       []uint64  `json:"shape"`
	DataOffsets [2]uint64 `json:"data_offsets"`
	Bytes       uint64    `json:"bytes"`
}

type inspectJSON struct {
	Schema      string        `json:"schema"`
	Path        string        `json:"path"`
	Valid       bool          `json:"valid"`
	FileSize    int64         `json:"file_size"`
	HeaderLen   uint64        `json:"header_len"`
	DataLen     int64         `json:"data_len"`
	TensorCount int           `json:"tensor_count"`
	Params      paramsJSON    `json:"params"`
	ParamsTotal uint64        `json:"params_total"`
	Metadata    metaJSON      `json:"metadata"`
	Info        lora.Info     `json:"info"`
	Tensors     []tensorJSON  `json:"tensors"`
	Findings    []findingJSON `json:"findings"`
	// FindingCounts counts the findings of each code in full (see checkFileJSON).
	FindingCounts map[string]int `json:"finding_counts"`
}

// inspected is one file read for inspect: its model, what it is, and every finding.
type inspected struct {
	m        *canon.Model
	info     lora.Info
	findings []canon.Finding
}

// inspectFile reads a model's header and sidecars (and with verify, its data) and derives its Info.
func inspectFile(ctx context.Context, opt source.Options, path string, verify bool) (*inspected, error) {
	opened, err := source.Open(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	defer opened.Close()
	m := opened.Model
	var sidecars []lora.Sidecar
	var sidecarFindings []canon.Finding
	if !opened.Remote && m.Shards == nil {
		sidecars, sidecarFindings = lora.LoadSidecars(ctx, path)
	}
	in := &inspected{m: m, info: lora.Derive(m, sidecars, path)}
	in.findings = append(append(append([]canon.Finding{}, m.Findings...), sidecarFindings...), in.info.Findings...)
	if verify && m.HeaderParsed && m.Shards == nil && len(in.info.EmbeddedHashes) > 0 {
		e, _, err := hash.FileHashes(ctx, opened.Source, m, false, hash.Options{})
		if err != nil {
			return nil, err
		}
		if err := opened.Unchanged(); err != nil {
			return nil, err
		}
		in.findings = append(in.findings, hash.VerifyEmbedded(m, e.AutoV3)...)
	}
	return in, nil
}

func (c *inspectCmd) run(o *out) int {
	if c.Short {
		return c.runShort(o)
	}
	status := exitOK
	for i, path := range c.Files {
		in, err := inspectFile(o.ctx, o.src, path, c.Verify)
		if err != nil {
			o.readFailed(err)
			status = exitTrouble
			continue
		}
		if hasError(in.findings) && status == exitOK {
			status = exitFound
		}
		switch o.format {
		case "json":
			o.writeJSON(c.toJSON(in))
		case "markdown":
			c.printMarkdown(o, in)
		default:
			if i > 0 {
				o.printf("\n")
			}
			c.printText(o, in)
		}
	}
	return status
}

// omittedCount is the number of findings counted but not listed.
func omittedCount(omitted map[string]int) int {
	n := 0
	for _, k := range omitted {
		n += k
	}
	return n
}

func hasError(fs []canon.Finding) bool {
	for _, f := range fs {
		if f.Severity == canon.SevError {
			return true
		}
	}
	return false
}

func (c *inspectCmd) toJSON(in *inspected) inspectJSON {
	m := in.m
	per, total := m.Params()
	j := inspectJSON{Schema: "stdiff.inspect/v1", Path: m.Name, Valid: m.Valid(), FileSize: m.FileSize,
		HeaderLen: m.HeaderLen, DataLen: max(m.DataLen(), 0), TensorCount: len(m.Tensors), Params: per,
		ParamsTotal: total.Elements, Metadata: m.Metadata, Info: in.info, Findings: findingsJSON(in.findings),
		FindingCounts: canon.CountFindings(in.findings, m.Omitted),
		Tensors:       make([]tensorJSON, 0, len(m.Tensors))}
	if j.Params == nil {
		j.Params = paramsJSON{}
	}
	for _, t := range m.Tensors {
		shape := t.Shape
		if shape == nil {
			shape = []uint64{}
		}
		j.Tensors = append(j.Tensors, tensorJSON{Name: t.Name, DType: string(t.DType), Shape: shape,
			DataOffsets: [2]uint64{t.Begin, t.End}, Bytes: t.Len()})
	}
	return j
}

// printText prints the card: what the file is, in a few aligned lines.
func (c *inspectCmd) printText(o *out, in *inspected) {
	m, info := in.m, &in.info
	o.printf("%s\n", o.pal.Bold(textfmt.Escape(m.Name)))
	row := func(label, format string, args ...any) {
		o.printf("  %-11s %s\n", label, fmt.Sprintf(format, args...))
	}
	from := func(field string) string {
		if src := info.Sources[field]; src != "" {
			return o.pal.Dim("  (" + textfmt.Escape(src) + ")")
		}
		return ""
	}
	if m.HeaderParsed {
		row("name", "%s%s", textfmt.Escape(info.Name), from("name"))
		what := []string{string(info.Kind)}
		if info.Naming != lora.NamingUnknown {
			what = append(what, string(info.Naming))
		}
		if info.Family != lora.FamilyUnknown {
			what = append(what, string(info.Family))
		}
		if info.Rank > 0 {
			r := fmt.Sprintf("rank %d", info.Rank)
			if len(info.Ranks) > 0 {
				r = fmt.Sprintf("ranks %s", intsText(info.Ranks))
			}
			what = append(what, r)
		}
		row("is", "%s", strings.Join(what, " · "))
		if info.BaseModel != "" {
			row("base model", "%s%s", textfmt.Escape(info.BaseModel), from("base_model"))
		}
		if len(info.TriggerDetails) > 0 {
			var curated, derived []string
			for _, t := range info.TriggerDetails {
				if t.Derived {
					derived = append(derived, textfmt.Escape(t.Word))
				} else {
					curated = append(curated, textfmt.Escape(t.Word))
				}
			}
			if len(curated) > 0 {
				row("triggers", "%s%s", strings.Join(curated, ", "), o.pal.Dim("  ("+textfmt.Escape(info.TriggerDetails[0].Source)+")"))
			}
			if len(derived) > 0 {
				row("guessed", "%s%s", strings.Join(derived, ", "), o.pal.Dim("  (derived from the training data, not declared)"))
			}
		}
		if info.CivitAI.ModelID != 0 {
			u := fmt.Sprintf("https://civitai.com/models/%d", info.CivitAI.ModelID)
			if info.CivitAI.VersionID != 0 {
				u += fmt.Sprintf("?modelVersionId=%d", info.CivitAI.VersionID)
			}
			row("civitai", "%s%s", u, from("civitai.model_id"))
		}
		if info.Author != "" {
			row("author", "%s%s", textfmt.Escape(info.Author), from("author"))
		}
		if info.Description != "" {
			row("about", "%s", textfmt.Shorten(info.Description, 100))
		}
		if info.NetworkModule != "" || info.DeclaredRank != "" {
			row("network", "%s", strings.TrimLeft(strings.Join([]string{textfmt.Escape(info.NetworkModule),
				labelled("dim", info.DeclaredRank), labelled("alpha", info.DeclaredAlpha)}, " "), " "))
		}
		if len(info.EmbeddedHashes) > 0 {
			var hs []string
			for _, k := range lora.EmbeddedHashKeys {
				if v, ok := info.EmbeddedHashes[k.Key]; ok {
					if len(v) > 14 {
						v = v[:12] + "…"
					}
					hs = append(hs, fmt.Sprintf("%s %s", k.Key, textfmt.Escape(v)))
				}
			}
			note := ""
			if !c.Verify {
				note = o.pal.Dim("  (not verified: --verify)")
			}
			row("hashes", "%s%s", strings.Join(hs, ", "), note)
		}
	}
	if m.Valid() {
		row("verdict", "%s", o.pal.Green("valid"))
	} else {
		row("verdict", "%s (%s)", o.pal.Red("invalid"), m.RefErr.Kind)
	}
	switch {
	case m.Shards != nil:
		row("size", "%s of tensor data in %s", textfmt.Bytes(uint64(m.FileSize)), textfmt.Plural(len(m.Shards), "shard"))
	case m.HeaderParsed:
		row("size", "%s (header %s B, data %s B)", textfmt.Bytes(uint64(m.FileSize)), textfmt.Thousands(m.HeaderLen), textfmt.Thousands(uint64(max(m.DataLen(), 0))))
	default:
		row("size", "%s (no readable header)", textfmt.Bytes(uint64(m.FileSize)))
	}
	per, total := m.Params()
	parts := make([]string, 0, len(per))
	for _, p := range per {
		parts = append(parts, fmt.Sprintf("%s %s", textfmt.Escape(string(p.DType)), textfmt.Thousands(p.Elements)))
	}
	row("tensors", "%d", len(m.Tensors))
	if len(per) > 0 {
		row("parameters", "%s (%s)", textfmt.Thousands(total.Elements), strings.Join(parts, " · "))
	}
	if len(m.Metadata) == 0 {
		if m.HasMetadata {
			row("metadata", "empty")
		} else {
			row("metadata", "none")
		}
	} else {
		row("metadata", "%s", textfmt.Plural(len(m.Metadata), "key"))
		width := 0
		for _, e := range m.Metadata {
			width = max(width, min(len(e.Key), 32))
		}
		for _, e := range m.Metadata {
			o.printf("    %-*s  %s\n", width, textfmt.Escape(e.Key), metaValueText(e.Value))
		}
	}
	if len(m.Tensors) > 0 {
		limit := len(m.Tensors)
		if !c.Tensors && limit > 10 {
			limit = 10
		}
		o.printf("  %s\n", o.pal.Dim("tensors (header order)"))
		nameW := 0
		for _, t := range m.Tensors[:limit] {
			nameW = max(nameW, min(len(t.Name), 60))
		}
		for _, t := range m.Tensors[:limit] {
			o.printf("    %-*s  %-7s %-20s %s\n", nameW, textfmt.Escape(t.Name), textfmt.Escape(string(t.DType)), shapeString(t.Shape), textfmt.Bytes(t.Len()))
		}
		if limit < len(m.Tensors) {
			o.printf("    … %d more (--tensors lists all)\n", len(m.Tensors)-limit)
		}
	}
	if len(in.findings) == 0 {
		row("findings", "none")
	} else {
		row("findings", "%s", textfmt.Thousands(uint64(len(in.findings)+omittedCount(in.m.Omitted))))
		o.printFindings(in.findings, in.m.Omitted, "    ")
	}
}

// printMarkdown prints the card as a table, for issues and pull requests.
func (c *inspectCmd) printMarkdown(o *out, in *inspected) {
	m, info := in.m, &in.info
	o.printf("### %s\n\n| | |\n|---|---|\n", markdown.Text(m.Name))
	row := func(k, v string) {
		if v != "" {
			o.printf("| %s | %s |\n", k, markdown.Text(v))
		}
	}
	verdict := "valid"
	if !m.Valid() {
		verdict = "invalid (" + string(m.RefErr.Kind) + ")"
	}
	rank := ""
	if info.Rank > 0 {
		rank = fmt.Sprint(info.Rank)
	}
	ids := ""
	if info.CivitAI.ModelID != 0 {
		ids = fmt.Sprintf("model %d, version %d", info.CivitAI.ModelID, info.CivitAI.VersionID)
	}
	per, total := m.Params()
	parts := make([]string, 0, len(per))
	for _, p := range per {
		parts = append(parts, fmt.Sprintf("%s %s", p.DType, textfmt.Thousands(p.Elements)))
	}
	for _, kv := range [][2]string{{"name", info.Name}, {"kind", string(info.Kind)}, {"naming", string(info.Naming)}, {"family", string(info.Family)},
		{"rank", rank}, {"base model", info.BaseModel}, {"triggers", strings.Join(info.Triggers, ", ")}, {"CivitAI", ids},
		{"verdict", verdict}, {"size", textfmt.Bytes(uint64(m.FileSize))}, {"tensors", fmt.Sprint(len(m.Tensors))},
		{"parameters", fmt.Sprintf("%s (%s)", textfmt.Thousands(total.Elements), strings.Join(parts, " · "))}} {
		row(kv[0], kv[1])
	}
	if len(in.findings) > 0 {
		o.printf("\n")
	}
	for _, f := range findingsJSON(in.findings) {
		o.printf("- %s\n", mdFinding(f))
	}
	o.printf("\n") // a blank line ends the card
}

func labelled(label, v string) string {
	if v == "" {
		return ""
	}
	return label + " " + textfmt.Escape(v)
}

func intsText(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// metaValueText shows a metadata value on one line; images and other huge values are summarised.
func metaValueText(v string) string {
	if strings.HasPrefix(v, "data:") {
		kind, _, _ := strings.Cut(strings.TrimPrefix(v, "data:"), ";")
		return fmt.Sprintf("(%s data URL, %s, not shown)", textfmt.Escape(textfmt.Shorten(kind, 30)), textfmt.Bytes(uint64(len(v))))
	}
	if textfmt.IsBlob(v) { // a base64 image or the like
		return fmt.Sprintf("(%s, not shown)", textfmt.Bytes(uint64(len(v))))
	}
	return textfmt.Shorten(v, 100)
}

func shapeString(s []uint64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
