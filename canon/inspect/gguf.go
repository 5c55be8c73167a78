package inspect

import (
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/card"
	"github.com/stdiff/stdiff/canon/lora"
)

// keyArchitecture is the GGUF key naming the model's architecture.
const keyArchitecture = "general.architecture"

// ggufInfo completes what lora.Derive says of a GGUF model from the general.* keys llama.cpp's
// converter writes: the name (general.name, over the file name), the author, the description, the
// base model (general.base_model.0.name or its repository), the kind (a model is a checkpoint, a LoRA
// adapter a lora) and the family (general.architecture: the diffusion families by name, any other
// architecture is a language model).
func ggufInfo(m *canon.Model, g *card.GGUF, in *lora.Info) {
	if g == nil {
		return
	}
	str := func(key string) string {
		switch key {
		case "general.type":
			return g.Type
		case keyArchitecture:
			return g.Architecture
		}
		return g.Strings[key]
	}
	set := func(field *string, name string, keys ...string) {
		if *field != "" && in.Sources[name] != "file name" {
			return
		}
		for _, k := range keys {
			if v := strings.TrimSpace(str(k)); v != "" {
				*field, in.Sources[name] = v, "metadata "+k
				return
			}
		}
	}
	set(&in.Name, "name", "general.name")
	set(&in.Author, "author", "general.author")
	set(&in.Description, "description", "general.description")
	set(&in.BaseModel, "base_model", "general.base_model.0.name", "general.base_model.0.repo_url")
	if in.Kind == lora.KindUnknown && len(m.Tensors) > 0 { // a vocabulary-only file is no model
		switch typ := str("general.type"); {
		case typ == "adapter" && str("adapter.type") == "lora":
			in.Kind = lora.KindLoRA
		case typ == "" || typ == "model":
			in.Kind = lora.KindCheckpoint
		}
		if in.Kind != lora.KindUnknown {
			in.Sources["kind"] = "metadata general.type"
		}
	}
	if arch := str(keyArchitecture); in.Family == lora.FamilyUnknown && arch != "" {
		fam, ok := map[string]lora.Family{"sd1": lora.FamilySD1, "sdxl": lora.FamilySDXL, "sd3": lora.FamilySD3, "flux": lora.FamilyFlux}[arch]
		if !ok {
			fam = lora.FamilyLLM
		}
		in.Family, in.Sources["family"] = fam, "metadata "+keyArchitecture
	}
}
