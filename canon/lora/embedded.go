package lora

import (
	"fmt"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/finding"
)

// emptySHA256 is the SHA256 of no bytes: what a trainer that hashed nothing embeds.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// VerifyEmbedded compares the hashes a trainer embedded in the metadata (those of EmbeddedHashKeys that
// hold an AutoV3: kohya's sshs_model_hash, ModelSpec's modelspec.hash_sha256) with the file's real
// AutoV3 (lower-case hex), and returns a finding for each: embedded-hash-verified or
// embedded-hash-mismatch. Without an AutoV3 ("") there is nothing to compare with, and no finding.
func VerifyEmbedded(m *canon.Model, autoV3 string) []finding.Finding {
	if autoV3 == "" {
		return nil
	}
	var out []finding.Finding
	for _, k := range EmbeddedHashKeys {
		if !k.AutoV3 {
			continue
		}
		key := k.Key
		v, ok := m.Meta(key)
		if !ok || v == "" {
			continue
		}
		var off int64 = -1
		for _, e := range m.Metadata {
			if e.Key == key {
				off = e.Offset
			}
		}
		got := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v), "0x"))
		if got == autoV3 {
			out = append(out, finding.Finding{Code: canon.CodeHashMatch, Severity: finding.SevInfo, Offset: off,
				Message: fmt.Sprintf("%s matches the file's AutoV3 (%s…)", key, autoV3[:min(12, len(autoV3))])})
			continue
		}
		msg := fmt.Sprintf("%s is %s but the file's AutoV3 is %s", key, got[:min(12, len(got))], autoV3[:min(12, len(autoV3))])
		if got == emptySHA256 {
			msg += " (the embedded value is the SHA256 of empty input: the trainer hashed nothing)"
		}
		out = append(out, finding.Finding{Code: canon.CodeHashMismatch, Severity: finding.SevWarning, Offset: off, Message: msg,
			Hint: "the metadata's hash is stale or wrong; look the file up by its real AutoV3 or SHA256"})
	}
	return out
}
