package loadcode

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/finding"
)

// Keras finding codes.
const (
	// CodeKerasArchive: the file is a Keras v3 archive (a zip of config.json, metadata.json and
	// model.weights.h5), not a PyTorch checkpoint: stdiff reads its config, not its HDF5 weights.
	CodeKerasArchive = "keras-archive"
	// CodeKerasForeignModule: a layer or object of the config names a module outside Keras: Keras
	// imports it when the model loads (CVE-2025-1550, also with safe_mode).
	CodeKerasForeignModule = "keras-foreign-module"
	// CodeKerasLambda: a Lambda layer holding Python bytecode, run when the model loads with
	// safe_mode=False (CVE-2024-3660).
	CodeKerasLambda = "keras-lambda"
)

// kerasModules are the module prefixes of Keras and its own libraries.
var kerasModules = []string{"keras", "keras_hub", "keras_nlp", "keras_cv", "tf_keras", "tensorflow.keras"}

// Keras reads path as a Keras v3 archive: ok is false when it is not one. The findings name it and
// every module of its config outside Keras.
func Keras(path string) (fs []finding.Finding, ok bool) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, false
	}
	defer z.Close()
	var cfg *zip.File
	has := map[string]bool{}
	for _, f := range z.File {
		has[f.Name] = true
		if f.Name == "config.json" {
			cfg = f
		}
	}
	if cfg == nil || !has["metadata.json"] || !(has["model.weights.h5"] || has["model.weights.npz"]) {
		return nil, false
	}
	fs = append(fs, finding.Finding{Code: CodeKerasArchive, Severity: finding.SevInfo, Offset: -1, Entry: "config.json",
		Message: "a Keras archive (config.json, metadata.json, model.weights.h5): its config is read, its HDF5 weights are not"})
	if cfg.UncompressedSize64 > maxFile {
		return fs, true
	}
	rc, err := cfg.Open()
	if err != nil {
		return fs, true
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxFile))
	if err != nil {
		return fs, true
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return fs, true
	}
	foreign := map[string]string{}
	lambdas := 0
	walkKeras(v, foreign, &lambdas, 0)
	mods := make([]string, 0, len(foreign))
	for m := range foreign {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		fs = append(fs, finding.Finding{Code: CodeKerasForeignModule, Severity: finding.SevError, Offset: -1, Entry: "config.json",
			Message: fmt.Sprintf("the config names %s from the module %s, outside Keras: loading the model imports it", foreign[m], m),
			Hint:    "do not load this model: Keras imports the module named even with safe_mode"})
	}
	if lambdas > 0 {
		fs = append(fs, finding.Finding{Code: CodeKerasLambda, Severity: finding.SevError, Offset: -1, Entry: "config.json",
			Message: fmt.Sprintf("%d Lambda layers hold Python bytecode, run when the model loads with safe_mode=False", lambdas),
			Hint:    "load it only with safe_mode (the default), which refuses them"})
	}
	return fs, true
}

// walkKeras finds every {"module": …, "class_name": …} object outside Keras and every Lambda layer
// holding bytecode.
func walkKeras(v any, foreign map[string]string, lambdas *int, depth int) {
	if depth > 200 {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		mod, hasMod := v["module"].(string)
		class, _ := v["class_name"].(string)
		if hasMod && mod != "" && !kerasModule(mod) {
			if _, seen := foreign[mod]; !seen {
				foreign[mod] = class
			}
		}
		if class == "__lambda__" {
			*lambdas++
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkKeras(v[k], foreign, lambdas, depth+1)
		}
	case []any:
		for _, x := range v {
			walkKeras(x, foreign, lambdas, depth+1)
		}
	}
}

func kerasModule(mod string) bool {
	for _, p := range kerasModules {
		if mod == p || strings.HasPrefix(mod, p+".") {
			return true
		}
	}
	return false
}
