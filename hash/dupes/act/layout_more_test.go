//go:build unix

package act

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"

	"github.com/stdiff/stdiff/canon/gguf/ggufw"
)

// The classes of models TestDupesNeverDeleteTheLastCopy adds with addMore: models that are more than
// their tensors (metadata alone; GGUF keys llama.cpp reads) and models made of several files (split
// GGUF, shards without an index), whole, copied, or in part.

// splitName matches the files of a split GGUF model and the shards of a set (…-0000K-of-0000N.ext).
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.(gguf|safetensors)$`)

// splitFiles are the files of the set without an index that path is the first file of, as the test
// sees them: every …-0000K-of-0000N file there and no index beside them; nil for anything else.
func splitFiles(path string) []string {
	m := splitName.FindStringSubmatch(filepath.Base(path))
	if m == nil || m[2] != "00001" {
		return nil
	}
	n, _ := strconv.Atoi(m[3])
	dir := filepath.Dir(path)
	if _, err := os.Stat(filepath.Join(dir, m[1]+".safetensors.index.json")); n < 2 || err == nil {
		return nil
	}
	var out []string
	for k := 1; k <= n; k++ {
		p := filepath.Join(dir, fmt.Sprintf("%s-%05d-of-%05d.%s", m[1], k, n, m[4]))
		if _, err := os.Stat(p); err != nil {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// stillOneOf reports whether the real file rf is still one of paths.
func stillOneOf(rf realFile, paths []string) bool {
	for _, q := range paths {
		var st syscall.Stat_t
		if syscall.Stat(q, &st) == nil && (realFile{uint64(st.Dev), uint64(st.Ino)}) == rf {
			return true
		}
	}
	return false
}

// ggufVariants differ only in keys llama.cpp reads: none of them is a copy of another.
var ggufVariants = [][]ggufw.KV{
	nil,
	{{Key: "tokenizer.ggml.merges", Val: ggufw.Strs("a b", "ab c")}},
	{{Key: "tokenizer.chat_template", Val: ggufw.Str("{{ a }}")}},
	{{Key: "tokenizer.chat_template", Val: ggufw.Str("{{ b }}")}},
}

// addMore makes one random addition of the classes above; a model made of several files is scanned
// by its first file (Find joins the others to it) and sits in a folder of its own.
func (c *collection) addMore() {
	t := c.t
	add := func(p string) {
		c.more = append(c.more, p)
		c.scanned = append(c.scanned, p)
	}
	switch op := c.rng.IntN(6); {
	case op == 0 || len(c.more) == 0: // a model without tensors
		if c.rng.IntN(2) == 0 {
			p := c.next("meta") + ".safetensors"
			mustWrite(t, p, metadataOnly("note", fmt.Sprint(c.rng.IntN(2))))
			add(p)
		} else {
			p := c.next("vocab") + ".gguf"
			mustWrite(t, p, vocabOnly("v", fmt.Sprint(c.rng.IntN(2))))
			add(p)
		}
	case op == 1: // a GGUF file: the same tensors, its tokenizer or template one of several
		p := c.next("tok") + ".gguf"
		// a key llama.cpp reads that add's GGUF files (ggufFile) lack: no tok file is a content copy of
		// one of them, which may be deleted for it losing only its descriptive general.name
		kvs := append([]ggufw.KV{{Key: "llama.block_count", Val: ggufw.U32(4)}}, ggufVariants[c.rng.IntN(len(ggufVariants))]...)
		mustWrite(t, p, ggufWith(kvs...))
		add(p)
	case op == 2: // a split GGUF model
		paths := writeSplit(t, c.next("split"), "model", "gguf", splitGGUF(2+c.rng.IntN(2), "tiny", byte(c.rng.IntN(2))))
		add(paths[0])
	case op == 3: // a set of shards without an index
		paths := writeSplit(t, c.next("shards"), "model", "safetensors", splitSafetensors(2, int64(c.rng.IntN(2))))
		add(paths[0])
	case op == 4: // a byte copy of one of them, whole, in a folder of its own
		from := c.pick(c.more)
		files := splitFiles(from)
		part := files == nil && splitName.MatchString(filepath.Base(from)) // a part of a set is never a copy
		if files == nil {
			files = []string{from}
		}
		dir := c.next("morecopy")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			mustWrite(t, filepath.Join(dir, filepath.Base(f)), b)
		}
		p := filepath.Join(dir, filepath.Base(from))
		add(p)
		if !part {
			c.copies = append(c.copies, [2]string{from, p})
		}
	default: // one file of a set without an index, copied on its own: a set not all there
		from := c.pick(c.more)
		files := splitFiles(from)
		if files == nil {
			return
		}
		f := files[c.rng.IntN(len(files))]
		b, _ := os.ReadFile(f)
		p := filepath.Join(c.next("part"), filepath.Base(f))
		mustWrite(t, p, b)
		add(p)
	}
}

// contents are the bytes of every model of addMore, file by file.
func (c *collection) contents() map[string][][]byte {
	out := map[string][][]byte{}
	for _, p := range c.more {
		out[p] = c.modelBytes(p)
	}
	return out
}

// modelBytes are the bytes of the files of the model at p, in order, or nil when one is gone.
func (c *collection) modelBytes(p string) [][]byte {
	files := splitFiles(p)
	if files == nil {
		files = []string{p}
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil
		}
		out = append(out, b)
	}
	return out
}

// checkSurvivors checks that every model of addMore that existed before (before) still has a
// complete copy, byte for byte and file by file, among the models of addMore after act.
func (c *collection) checkSurvivors(before map[string][][]byte, act string) {
	c.t.Helper()
	var now [][][]byte
	for _, p := range c.more {
		if b := c.modelBytes(p); b != nil {
			now = append(now, b)
		}
	}
	same := func(a, b [][]byte) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !bytes.Equal(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	for p, b := range before {
		found := false
		for _, n := range now {
			found = found || same(b, n)
		}
		if !found {
			c.t.Errorf("after %s no complete copy of %s (%d files) is left", act, p, len(b))
		}
	}
}
