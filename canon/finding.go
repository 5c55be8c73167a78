package canon

import (
	"github.com/stdiff/stdiff/canon/finding"
)

// AddFinding records a finding made outside Read (opening a set, deriving LoRA info), keeping at most
// finding.MaxPerCode of each code as Read does.
func (m *Model) AddFinding(f finding.Finding) { m.add(f) }

// add records a finding, or only counts it when finding.MaxPerCode of its code are kept already.
func (m *Model) add(f finding.Finding) {
	if m.room(f.Code) {
		m.Findings = append(m.Findings, f)
		m.kept[f.Code]++
	}
}

// room reports whether a finding of code would be kept. When it would not, it counts the finding as
// omitted: a caller that checks room first need not build the finding's message at all.
func (m *Model) room(code string) bool {
	if m.kept == nil {
		m.kept = map[string]int{}
		for _, f := range m.Findings { // findings appended before the first add
			m.kept[f.Code]++
		}
	}
	if m.kept[code] < finding.MaxPerCode {
		return true
	}
	m.omit(code, 1)
	return false
}

// omit counts n findings of code as made but not kept.
func (m *Model) omit(code string, n int) {
	if m.Omitted == nil {
		m.Omitted = map[string]int{}
	}
	m.Omitted[code] += n
}

// FindingCounts returns, per code, how many findings the model has: those kept in Findings plus those
// counted in Omitted.
func (m *Model) FindingCounts() map[string]int { return CountFindings(m.Findings, m.Omitted) }

// CountFindings returns, per code, how many findings there are: those in fs plus those counted in
// omitted (which may be nil).
func CountFindings(fs []finding.Finding, omitted map[string]int) map[string]int {
	n := make(map[string]int, len(omitted))
	for _, f := range fs {
		n[f.Code]++
	}
	for code, k := range omitted {
		n[code] += k
	}
	return n
}

// Finding codes of canon's own (sets, sidecars, indexes, pipelines). They are part of stdiff's
// contract with scripts: add, never rename. Those of the safetensors format are package finding's.
const (
	CodeHashMismatch       = "embedded-hash-mismatch"
	CodeHashMatch          = "embedded-hash-verified"
	CodeBadSidecar         = "bad-sidecar"
	CodeRankMismatch       = "rank-mismatch"
	CodeShardMetadata      = "shard-metadata-differs"
	CodeTensorInTwoShards  = "tensor-in-two-shards"
	CodeIndexTensorMissing = "index-tensor-missing"
	CodeTensorNotInIndex   = "tensor-not-in-index"
	CodeIndexTotalSize     = "index-total-size"
	CodeIncompleteSet      = "incomplete-shard-set"
	CodeShardFormat        = "shard-format-differs"
	CodeSplitNumber        = "split-number"
	CodeSplitCount         = "split-count"
	CodeSplitTensorCount   = "split-tensor-count"
	CodeMissingShards      = "missing-shards"
	CodeMissingSplit       = "missing-split"
	CodeMissingComponent   = "missing-component"
	CodePipeline           = "diffusers-pipeline"
	CodePipelineComponent  = "pipeline-component-skipped"
	// CodeSidecarMismatch: a sidecar next to a model records another file (its name, size or hashes).
	CodeSidecarMismatch = "sidecar-mismatch"
)
