package inspect

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stdiff/stdiff/canon"
)

// TestCover: an embedded cover is kept only when it is base64 of a real PNG or JPEG image (a header that
// reads as one), whether in modelspec.thumbnail or ssmd_cover_images; anything else is left out.
func TestCover(t *testing.T) {
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3)))
	b64 := base64.StdEncoding.EncodeToString(img.Bytes())
	fake := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n not a png at all"))
	for _, c := range []struct {
		key, value, want string
	}{
		{"modelspec.thumbnail", "data:image/png;base64," + b64, "data:image/png;base64," + b64},
		{"ssmd_cover_images", `["` + b64 + `", "x"]`, "data:image/png;base64," + b64},
		{"ssmd_cover_images", `["` + fake + `"]`, ""},
		{"modelspec.thumbnail", "data:image/jpeg;base64," + b64, ""}, // says JPEG, is PNG
		{"modelspec.thumbnail", "data:image/png;base64," + b64[:len(b64)-4] + `"><s`, ""},
		{"ssmd_cover_images", `"` + b64 + `"`, ""},
	} {
		m := &canon.Model{Metadata: []canon.MetaEntry{{Key: c.key, Value: c.value}}}
		if got := coverOf(m); got != c.want {
			t.Errorf("%s=%.40q…: cover %.40q…, want %.40q…", c.key, c.value, got, c.want)
		}
	}
}

// TestPreviewOf: the preview beside a model, the most specific name first; none for a folder's name.
func TestPreviewOf(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.safetensors")
	if previewOf(model) != "" {
		t.Error("a preview where there is none")
	}
	for _, name := range []string{"m.png", "m.preview.png"} {
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "m.preview.jpg"), 0o755) // a folder is no image
	if got := previewOf(model); got != filepath.Join(dir, "m.preview.png") {
		t.Errorf("preview %q", got)
	}
}
