package dupes

import "github.com/stdiff/stdiff/canon/store"

// Store names a program whose files a path lies among (store.Store: the layouts are canon/store's,
// which inspect shares). Codes are stable and safe to match in scripts.
type Store = store.Store

// Stores.
const (
	// StoreHuggingFace: the Hugging Face cache (store.HuggingFace).
	StoreHuggingFace = store.HuggingFace
	// StoreOllama: ollama's models folder (store.Ollama).
	StoreOllama = store.Ollama
)

// ManagedBy says which program's store the local path lies in, "" for none (store.ManagedBy).
func ManagedBy(path string) Store { return store.ManagedBy(path) }
