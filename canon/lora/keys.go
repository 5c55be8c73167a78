package lora

import (
	"sort"

	"github.com/stdiff/stdiff/canon"
)

// HashKey is a metadata key in which a trainer embeds a hash of the file.
type HashKey struct {
	Key string
	// AutoV3 is true when the key holds the file's AutoV3 (the SHA256 of everything after the header),
	// which `stdiff hash --all` and `inspect --verify` check it against. sshs_legacy_hash holds an older
	// hash (of a part of the file) that stdiff does not recompute.
	AutoV3 bool
}

// EmbeddedHashKeys are the metadata keys in which trainers embed a hash of the file (kohya's sshs_*,
// ModelSpec's modelspec.hash_sha256), in the order stdiff shows them.
var EmbeddedHashKeys = []HashKey{
	{Key: "sshs_model_hash", AutoV3: true},
	{Key: "modelspec.hash_sha256", AutoV3: true},
	{Key: "sshs_legacy_hash"},
}

// VolatileKeys are metadata keys that differ between two runs of the same training, or are derived
// from the weights (so a tensor diff already says what they say): `diff --ignore-volatile` leaves them
// out. They include every key of EmbeddedHashKeys.
var VolatileKeys = []string{
	"ss_session_id", "ss_training_started_at", "ss_training_finished_at", "ss_sd_scripts_commit_hash",
	"sshs_model_hash", "sshs_legacy_hash", "ss_new_sd_model_hash", "ss_new_vae_hash",
	"modelspec.date", "modelspec.hash_sha256", "__spacer",
}

// BookkeepingKeys are metadata keys a writer adds about itself, not about the model: the Python
// safetensors bindings write {"format": "pt"} (or np, tf, flax, mlx) into every file and every shard.
// A difference there is a note, not a difference of the models.
var BookkeepingKeys = []string{"format"}

// CoverKeys are the metadata keys in which a cover image is embedded in the file (AddNet's
// ssmd_cover_images, ModelSpec's modelspec.thumbnail): a card summarises them by size, and
// `stdiff dupes` counts a cover as information a copy carries.
var CoverKeys = []string{"ssmd_cover_images", "modelspec.thumbnail"}

// KeyTopic says what a metadata key that matters is about.
type KeyTopic string

// Topics of the keys that matter, in the order a card shows them.
const (
	TopicName     KeyTopic = "name"     // what the model is called, who made it, what it is for
	TopicBase     KeyTopic = "base"     // the base model it was trained on
	TopicNetwork  KeyTopic = "network"  // the adapter's method and size
	TopicTraining KeyTopic = "training" // the training basics: images, epochs, steps, learning rate, when
	TopicHash     KeyTopic = "hash"     // hashes of the file the trainer embedded
)

// MetaKey is a metadata key that matters and what it is about.
type MetaKey struct {
	Key   string
	Topic KeyTopic
}

// KeysThatMatter are the metadata keys a card shows, in the order it shows them; every other key
// (the dataset's tag counts, bucket layouts, noise settings, bookkeeping, …) folds into a count. The
// hash keys are EmbeddedHashKeys.
var KeysThatMatter = keysThatMatter()

func keysThatMatter() []MetaKey {
	var ks []MetaKey
	add := func(topic KeyTopic, keys ...string) {
		for _, k := range keys {
			ks = append(ks, MetaKey{Key: k, Topic: topic})
		}
	}
	add(TopicName, "ssmd_display_name", "modelspec.title", "ss_output_name", "ssmd_author", "modelspec.author",
		"ssmd_description", "modelspec.description", "ssmd_keywords", "modelspec.trigger_phrase", "ss_training_comment",
		"ssmd_source", "ssmd_version", "modelspec.license", "modelspec.usage_hint")
	add(TopicBase, "ss_base_model_version", "modelspec.architecture", "ss_sd_model_name", "ss_new_sd_model_hash")
	// lora_diffusion names the layer classes it adapted under the model's name.
	add(TopicNetwork, "ss_network_module", "ss_network_dim", "ss_network_alpha", "ss_network_args", "unet", "text_encoder")
	add(TopicTraining, "ss_num_train_images", "ss_epoch", "ss_steps", "ss_learning_rate", "ss_optimizer",
		"ss_lr_scheduler", "ss_resolution", "modelspec.resolution", "modelspec.date")
	for _, h := range EmbeddedHashKeys {
		add(TopicHash, h.Key)
	}
	add(TopicName, CoverKeys...) // last: a cover is shown by its size only
	return ks
}

// keyRank is each key's place in KeysThatMatter.
var keyRank = func() map[string]int {
	r := make(map[string]int, len(KeysThatMatter))
	for i, k := range KeysThatMatter {
		r[k.Key] = i
	}
	return r
}()

// KeyMatters reports whether a metadata key is one a card shows (one of KeysThatMatter).
func KeyMatters(key string) bool {
	_, ok := keyRank[key]
	return ok
}

// SplitMetadata splits metadata into the entries a card shows, in the order of KeysThatMatter, and
// the number of the others it folds into a count. An entry that matters but says nothing (empty,
// "None", "null") is folded too.
func SplitMetadata(entries []canon.MetaEntry) (shown []canon.MetaEntry, folded int) {
	for _, e := range entries {
		if !KeyMatters(e.Key) || saysNothing(e.Value) {
			folded++
			continue
		}
		shown = append(shown, e)
	}
	sort.SliceStable(shown, func(i, j int) bool { return keyRank[shown[i].Key] < keyRank[shown[j].Key] })
	return shown, folded
}
