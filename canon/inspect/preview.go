package inspect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/stdiff/stdiff/canon"
	"github.com/stdiff/stdiff/canon/source"
)

// MaxCover is the most bytes of text an embedded cover image may have to be kept (a data: URL in a
// page): larger ones are left out.
const MaxCover = 512 << 10

// previewEndings are the names of preview images beside a model, most specific first (<stem> then one
// of these), as the web UIs save them.
var previewEndings = []string{".preview.png", ".preview.jpg", ".preview.jpeg", ".preview.webp", ".png", ".jpg", ".jpeg", ".webp"}

// previewOf is the preview image beside the local model at path, "" when there is none (or path is
// remote, or names a folder or a shard set's index).
func previewOf(path string) string {
	if source.IsRemote(path) || strings.HasSuffix(path, ".index.json") {
		return ""
	}
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	for _, end := range previewEndings {
		if st, err := os.Stat(stem + end); err == nil && st.Mode().IsRegular() {
			return stem + end
		}
	}
	return ""
}

// coverOf is the cover image a model's metadata embeds, as a checked data: URL, or "".
func coverOf(m *canon.Model) string {
	if v, ok := m.Meta("modelspec.thumbnail"); ok && len(v) <= MaxCover {
		if mime, data, ok := strings.Cut(strings.TrimPrefix(v, "data:"), ";base64,"); ok && strings.HasPrefix(v, "data:") {
			if imageOfBase64(data) == mime && mime != "" {
				return "data:" + mime + ";base64," + data
			}
		}
	}
	if v, ok := m.Meta("ssmd_cover_images"); ok && len(v) <= MaxCover+64 {
		first := firstString(v)
		if mime := imageOfBase64(first); mime != "" {
			return "data:" + mime + ";base64," + first
		}
	}
	return ""
}

// firstString is the first element of a JSON array of strings, "" when v is not one.
func firstString(v string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(v), "[")
	if !ok {
		return ""
	}
	rest = strings.TrimLeft(rest, " \t\r\n")
	if end := strings.IndexByte(rest[min(1, len(rest)):], '"'); strings.HasPrefix(rest, `"`) && end >= 0 && !strings.Contains(rest[1:1+end], `\`) {
		return rest[1 : 1+end] // the common case: no escapes to undo
	}
	var imgs []string
	if json.Unmarshal([]byte(v), &imgs) != nil || len(imgs) == 0 {
		return ""
	}
	return imgs[0]
}

// imageOfBase64 is the MIME type of the image in s (standard base64, every character checked), from
// its first bytes (see imageKind); "" when s is not base64 of such an image.
func imageOfBase64(s string) string {
	if s == "" || len(s)%4 != 0 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=' && i >= len(s)-2) {
			return ""
		}
	}
	head := s[:min(len(s), 64<<10)] // enough for a PNG's or JPEG's header; a multiple of 4
	b, err := base64.StdEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	return imageKind(b)
}

// imageKind is the MIME type of a PNG or JPEG image whose header reads as one, or of a WebP image by its
// first bytes; "" for anything else.
func imageKind(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		if _, err := png.DecodeConfig(bytes.NewReader(b)); err == nil {
			return "image/png"
		}
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		if _, err := jpeg.DecodeConfig(bytes.NewReader(b)); err == nil {
			return "image/jpeg"
		}
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}
