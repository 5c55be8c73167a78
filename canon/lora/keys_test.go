package lora

import (
	"reflect"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// TestSplitMetadataRealKohya: of the 65 keys of a real kohya SDXL LoRA, a card shows the name, the base
// model, the network, the training basics and the embedded hashes, in that order, and folds the other
// 46 (tag counts, dataset layout, noise and dropout settings, …, and ss_training_comment, which is
// "None").
func TestSplitMetadataRealKohya(t *testing.T) {
	m := canon.ReadBytes("real", kohyaSDXL(realKohyaMetadata(t)).Build())
	if len(m.Metadata) != 65 {
		t.Fatalf("%d metadata keys, want 65", len(m.Metadata))
	}
	shown, folded := SplitMetadata(m.Metadata)
	var keys []string
	for _, e := range shown {
		keys = append(keys, e.Key)
	}
	want := []string{"modelspec.title", "ss_output_name",
		"ss_base_model_version", "modelspec.architecture", "ss_sd_model_name", "ss_new_sd_model_hash",
		"ss_network_module", "ss_network_dim", "ss_network_alpha",
		"ss_num_train_images", "ss_epoch", "ss_steps", "ss_learning_rate", "ss_optimizer", "ss_lr_scheduler", "modelspec.resolution", "modelspec.date",
		"sshs_model_hash", "sshs_legacy_hash"}
	if !reflect.DeepEqual(keys, want) || folded != 65-len(want) {
		t.Errorf("shown %q, folded %d", keys, folded)
	}
	for _, k := range []string{"ss_tag_frequency", "ss_datasets", "ss_session_id", "format"} {
		if KeyMatters(k) {
			t.Errorf("%s matters", k)
		}
	}
	if !KeyMatters("ss_training_comment") { // folded above only for its value
		t.Error("ss_training_comment (a person's words) does not matter")
	}
}

// TestKeysThatMatterTable: each key once, with a topic; every embedded-hash key among them; no writer
// bookkeeping.
func TestKeysThatMatterTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range KeysThatMatter {
		if seen[k.Key] || k.Topic == "" {
			t.Errorf("%q twice or without a topic", k.Key)
		}
		seen[k.Key] = true
	}
	for _, h := range EmbeddedHashKeys {
		if !seen[h.Key] {
			t.Errorf("hash key %s does not matter", h.Key)
		}
	}
	for _, k := range BookkeepingKeys {
		if seen[k] {
			t.Errorf("bookkeeping key %s matters", k)
		}
	}
}
