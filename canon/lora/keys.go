package lora

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
