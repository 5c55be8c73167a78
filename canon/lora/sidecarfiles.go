package lora

import (
	"os"
	"path/filepath"
	"strings"
)

// Preview images: the endings of the images collection tools (Civitai Helper, SD Civitai Browser, the
// A1111 web UI's extra networks, LoRA Manager) save next to a model.
const (
	PreviewPNG  = ".preview.png"
	PreviewJPEG = ".preview.jpeg"
	PreviewJPG  = ".preview.jpg"
	PreviewWebP = ".preview.webp"
	ImagePNG    = ".png"
	ImageJPEG   = ".jpeg"
	ImageJPG    = ".jpg"
	ImageWebP   = ".webp"
)

// SidecarEndings are the endings of every file that belongs to a model and lives next to it as
// <stem><ending>: the JSON records stdiff reads (SidecarCivitAI, SidecarMetadata, SidecarAPIInfo,
// SidecarA1111) and the preview images. PEFT's adapter_config.json belongs to its folder, not to a
// stem, and is not among them.
var SidecarEndings = []string{SidecarCivitAI, SidecarMetadata, SidecarAPIInfo, SidecarA1111,
	PreviewPNG, PreviewJPEG, PreviewJPG, PreviewWebP, ImagePNG, ImageJPEG, ImageJPG, ImageWebP}

// SidecarFile is a file next to a model that belongs to it.
type SidecarFile struct {
	// Ending is one of SidecarEndings: what kind of file it is.
	Ending string `json:"kind"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
}

// SidecarPath is where the sidecar with ending of the model file modelPath is: its stem (the path
// without the model's extension) followed by ending.
func SidecarPath(modelPath, ending string) string {
	return strings.TrimSuffix(modelPath, filepath.Ext(modelPath)) + ending
}

// SidecarFiles lists the sidecar files of a local model file, in the order of SidecarEndings: each
// regular file SidecarPath(modelPath, ending) that exists (links followed). It reads no file, only
// their names.
func SidecarFiles(modelPath string) []SidecarFile {
	var out []SidecarFile
	for _, e := range SidecarEndings {
		p := SidecarPath(modelPath, e)
		if p == modelPath {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, SidecarFile{Ending: e, Path: p, Size: st.Size()})
		}
	}
	return out
}
