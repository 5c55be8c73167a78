package lora

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
	"github.com/stdiff/stdiff/canon/textfmt"
)

// ModelFile is what a local model file is, for telling whether a sidecar's record of a file is a
// record of this one.
type ModelFile struct {
	// Name is the file's base name; Size its size in bytes.
	Name string
	Size int64
	// Hashes are the file's hashes by CivitAI's names (SHA256, AutoV1, AutoV2, AutoV3, BLAKE3, CRC32), in
	// hex of either case; nil when the file's data was not read, and then only the size is compared.
	Hashes map[string]string
}

// civitaiHashNames are the hashes a CivitAI file record may carry that MatchSidecars compares.
var civitaiHashNames = []string{"SHA256", "AutoV2", "AutoV1", "AutoV3", "BLAKE3", "CRC32"}

// MatchSidecars keeps the sidecars that describe file and drops, each with a warning
// (canon.CodeSidecarMismatch), those that record another file, so that another model's name, trigger
// words and ids are never presented as this one's. A CivitAI record (SidecarCivitAI) lists the files of
// a model version (files[] with name, sizeKB, hashes); it describes file when one of them has its size
// (sizeKB is rounded: within 1 KiB) and, when file.Hashes is given, no hash that differs. The recorded
// name alone decides nothing, as people rename what they download; it is named in the warning. A
// record with no files, or files with neither size nor hashes, cannot be told apart and is kept.
func MatchSidecars(sidecars []Sidecar, file ModelFile) ([]Sidecar, []finding.Finding) {
	var kept []Sidecar
	var fs []finding.Finding
	for _, s := range sidecars {
		if s.Kind != SidecarCivitAI {
			kept = append(kept, s)
			continue
		}
		if f, ok := civitaiMismatch(s, file); ok {
			fs = append(fs, f)
			continue
		}
		kept = append(kept, s)
	}
	return kept, fs
}

// civitaiMismatch returns the finding for a CivitAI record none of whose files is file, and false when
// one is (or the record cannot tell).
func civitaiMismatch(s Sidecar, file ModelFile) (finding.Finding, bool) {
	list, _ := s.Data["files"].([]any)
	var entries []map[string]any
	for _, e := range list {
		if obj, ok := e.(map[string]any); ok {
			entries = append(entries, obj)
		}
	}
	if len(entries) == 0 {
		return finding.Finding{}, false
	}
	var shown map[string]any // the entry the warning describes: the primary file, else the first
	var why []string
	for _, e := range entries {
		diffs, comparable := fileDiffs(e, file)
		if !comparable || len(diffs) == 0 {
			return finding.Finding{}, false
		}
		if shown == nil || e["primary"] == true {
			shown, why = e, diffs
		}
	}
	name, _ := shown["name"].(string)
	if name != "" && name != file.Name {
		why = append([]string{fmt.Sprintf("its file is %s, not %s", name, file.Name)}, why...)
	}
	return finding.Finding{Code: canon.CodeSidecarMismatch, Severity: finding.SevWarning, Offset: -1,
		Message: fmt.Sprintf("sidecar %s records another file (%s); its name, trigger words and ids are not used",
			filepath.Base(s.Path), strings.Join(why, ", ")),
		Hint: "fetch this file's record again, or remove the sidecar"}, true
}

// fileDiffs compares one file record of a CivitAI sidecar with file: what disagrees, and whether
// anything could be compared at all.
func fileDiffs(e map[string]any, file ModelFile) (diffs []string, comparable bool) {
	if kb, ok := e["sizeKB"].(float64); ok && kb >= 0 && !math.IsInf(kb, 0) {
		comparable = true
		if recorded := kb * 1024; math.Abs(recorded-float64(file.Size)) >= 1024 {
			diffs = append(diffs, fmt.Sprintf("size %s, not %s", textfmt.Bytes(uint64(recorded)), textfmt.Bytes(uint64(max(file.Size, 0)))))
		}
	}
	hashes, _ := e["hashes"].(map[string]any)
	if file.Hashes == nil || hashes == nil {
		return diffs, comparable
	}
	for _, name := range civitaiHashNames {
		mine := strings.ToLower(file.Hashes[name])
		theirs, _ := hashes[name].(string)
		theirs = strings.ToLower(strings.TrimSpace(theirs))
		if mine == "" || len(theirs) < 8 {
			continue // not computed for this file (AutoV1 of a small one), or not a hash
		}
		comparable = true
		if !strings.HasPrefix(mine, theirs) {
			diffs = append(diffs, fmt.Sprintf("%s %s, not %s", name, shortHash(theirs), shortHash(mine)))
		}
	}
	return diffs, comparable
}

// shortHash is a hash cut to 12 digits for a message.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
