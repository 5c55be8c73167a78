package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stdiff/stdiff/canon/stfile"
)

// hostile is what a model file may say to a page: markup, a script, an attribute that runs code.
const hostile = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`

// pngOf is a w×h PNG of one colour.
func pngOf(w, h int, rgb [3]byte) []byte {
	var raw bytes.Buffer
	for range h {
		raw.WriteByte(0)
		for range w {
			raw.Write(rgb[:])
		}
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	chunk := func(typ string, data []byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		b = append(append(b, typ...), data...)
		return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(w)), uint32(h))
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	out = append(out, chunk("IDAT", z.Bytes())...)
	return append(out, chunk("IEND", nil)...)
}

// htmlPages writes a small collection (a LoRA with a preview beside it, one with hostile metadata under
// a hostile file name, a broken file) and two versions of a model (hostile metadata in one), and the
// pages of inspect --short and check of the collection and of diff of the versions; it returns the
// pages' paths by name.
func htmlPages(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	coll := filepath.Join(dir, "loras")
	os.Mkdir(coll, 0o755)
	fx := fixtures()
	write := func(path string, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(coll, "pepper.safetensors"), fx["lora.safetensors"])
	write(filepath.Join(coll, "pepper.preview.png"), pngOf(64, 48, [3]byte{200, 80, 40}))
	evil := stfile.LoRA()
	for i, kv := range evil.Metadata {
		if kv.Key == "ss_output_name" || kv.Key == "ss_base_model_version" {
			evil.Metadata[i].Value = hostile
		}
	}
	write(filepath.Join(coll, "<b>bold<i>.safetensors"), evil.Build())
	write(filepath.Join(coll, "cut.safetensors"), fx["truncated.safetensors"])
	weights := stfile.Weights()
	weights.Metadata = append(weights.Metadata, stfile.KV{Key: "note", Value: hostile})
	write(filepath.Join(dir, "v1.safetensors"), weights.Build())
	write(filepath.Join(dir, "v2.safetensors"), fx["weights-finetuned.safetensors"])
	pages := map[string]string{"gallery": filepath.Join(dir, "pages", "gallery.html"), "diff": filepath.Join(dir, "pages", "diff.html"),
		"check": filepath.Join(dir, "pages", "check.html"), "dupes": filepath.Join(dir, "pages", "dupes.html")}
	os.Mkdir(filepath.Join(dir, "pages"), 0o755)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"inspect", "--short", "--format", "html", "-o", pages["gallery"], coll}, &stdout, &stderr); code != exitFound {
		t.Fatalf("inspect --short: exit %d: %s", code, stderr.String())
	}
	for name, args := range map[string][]string{
		"diff":  {"--format", "html", filepath.Join(dir, "v1.safetensors"), filepath.Join(dir, "v2.safetensors")},
		"check": {"check", "--format", "html", filepath.Join(coll, "pepper.safetensors"), filepath.Join(coll, "<b>bold<i>.safetensors"), filepath.Join(coll, "cut.safetensors")},
		"dupes": {"dupes", "--no-cache", "--format", "html", coll},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code == exitTrouble {
			t.Fatalf("%s: %s", name, stderr.String())
		}
		write(pages[name], stdout.Bytes())
	}
	return pages
}

// TestHTMLPagesStatic: each page is one self-contained file: a policy that forbids every request, no
// address that loads anything from elsewhere, values from files escaped, the preview referenced
// relative to the page.
func TestHTMLPagesStatic(t *testing.T) {
	for name, path := range htmlPages(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		if !strings.Contains(page, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`) {
			t.Errorf("%s: no policy forbidding requests", name)
		}
		if strings.Contains(page, "<script>document.title") || strings.Contains(page, "<img src=x") || strings.Contains(page, "<b>bold") {
			t.Errorf("%s: a value from a file is not escaped", name)
		}
		for _, m := range regexp.MustCompile(`(?i)(src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if u := m[2]; strings.Contains(u, "://") && !(m[1] == "href" && strings.HasPrefix(u, "https://civitai.com/models/")) {
				t.Errorf("%s: %s=%q reaches out of the page", name, m[1], u)
			}
		}
		if n := strings.Count(page, "<script"); n != 1 {
			t.Errorf("%s: %d scripts, want the page's one", name, n)
		}
	}
	b, _ := os.ReadFile(htmlPages(t)["gallery"])
	if !strings.Contains(string(b), `src="../loras/pepper.preview.png"`) || strings.Count(string(b), "<article") != 3 {
		t.Errorf("gallery: the preview is not referenced relative to the page, or not 3 cards")
	}
}

// TestHTMLPagesInBrowser loads each page (inspect --short's gallery, diff, check, dupes) in headless Chromium (Debian's; skipped where absent): the
// cards and rows are there, the preview loads, no script error, no request refused (none was tried),
// hostile values stay text (the title is the page's), and nothing overflows 1280 pixels. With -update
// it saves a screenshot of each page in ../../testdata/screens, for cmd/stdiff/docs/pages.md.
func TestHTMLPagesInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-extensions", "--window-size=1280,900", "--enable-logging=stderr", "--v=0"}
	for name, path := range htmlPages(t) {
		cmd := exec.Command(chromium, append(flags, "--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", "file://"+path)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: chromium: %v\n%s", name, err, stderr.String())
		}
		d, logs := string(dom), stderr.String()
		for _, bad := range []string{"Uncaught", "Refused to", "Content Security Policy"} {
			if strings.Contains(logs, bad) {
				t.Errorf("%s: the browser says %q:\n%s", name, bad, logs)
			}
		}
		if !strings.Contains(d, `data-overflow="no"`) {
			t.Errorf("%s: wider than 1280 pixels, or the script did not run", name)
		}
		if strings.Contains(d, "<title>pwned") || !strings.Contains(d, "<title>stdiff") {
			t.Errorf("%s: a value from a file ran", name)
		}
		switch name {
		case "gallery":
			if strings.Count(d, "<article") != 3 || !regexp.MustCompile(`<img [^>]*pepper\.preview\.png[^>]*data-loaded`).MatchString(d) {
				t.Errorf("gallery: cards or the preview missing:\n%s", d)
			}
		case "diff":
			if !strings.Contains(d, `<tbody id="changed">`) {
				t.Errorf("diff: no table of changed tensors")
			}
		case "check":
			if strings.Count(d, "<section") != 3 || !strings.Contains(d, "invalid") {
				t.Errorf("check: sections or verdicts missing")
			}
		case "dupes": // pepper and its copy with hostile metadata: one content group, the keeper and why
			if strings.Count(d, "<section") != 1 || !strings.Contains(d, ">keep<") || !strings.Contains(d, "content  2 files") {
				t.Errorf("dupes: the group, its keeper or its heading missing:\n%s", d)
			}
		}
		if *update {
			shot := filepath.Join("..", "..", "testdata", "screens", name+".png")
			os.MkdirAll(filepath.Dir(shot), 0o755)
			abs, _ := filepath.Abs(shot)
			cmd := exec.Command(chromium, append(flags, "--user-data-dir="+t.TempDir(), "--hide-scrollbars", "--window-size=1024,640", "--screenshot="+abs, "file://"+path)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: screenshot: %v\n%s", name, err, out)
			}
		}
	}
}
