//go:build unix

package act

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stdiff/stdiff/canon/torch/torchw"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// The classes of models TestDupesNeverDeleteTheLastCopy adds with addInfo: models that hold more than
// their tensors, beside a safetensors file of the same tensors (issue 31): ONNX models (a graph),
// checkpoints with non-tensor content (a Lightning-like epoch and global_step, an OrderedDict's
// _metadata set by BUILD), and model folders (save_pretrained: model.safetensors and config.json,
// the same weights under other configs); byte copies of each. After --delete and --link every file's
// information (c.infos: the file whole, somewhere) and every folder's (c.folders: a folder of the
// same files, byte for byte, somewhere) still exists.

// addInfo makes one random addition of the classes above.
func (c *collection) addInfo() {
	t := c.t
	st := loraFile(int64(c.rng.IntN(3)), "info").Build()
	ts := torchTensors(st)
	twin := func() { // the safetensors file of the same tensors, beside or elsewhere
		p := c.next("twin") + ".safetensors"
		mustWrite(t, p, st)
		c.scanned = append(c.scanned, p)
		c.plain = append(c.plain, p)
	}
	info := func(p string, b []byte) {
		mustWrite(t, p, b)
		c.infos = append(c.infos, p)
		c.scanned = append(c.scanned, p)
	}
	switch op := c.rng.IntN(5); {
	case op == 0: // an ONNX model (a graph with a node) of the tensors
		info(c.next("graph")+".onnx", dupetest.InFormat("onnx", st))
		twin()
	case op == 1: // a Lightning-like checkpoint: the tensors and an epoch, a global step
		sd := torchw.StateDict(ts, "epoch", fmt.Sprint(c.rng.IntN(3)), "global_step", "120")
		info(c.next("ckpt")+".ckpt", torchw.Zip("archive", sd, ts))
		twin()
	case op == 2: // a state dict whose OrderedDict has _metadata set by BUILD
		sd := strings.TrimSuffix(torchw.StateDict(ts), ".") + "}" + torchw.Str("_metadata") + "}" + torchw.Str("version") + "K\x01ssb."
		info(c.next("meta")+".pt", torchw.Zip("archive", sd, ts))
		twin()
	case op == 3: // a model folder: the weights and one of two configs
		dir := c.next("folder")
		p := filepath.Join(dir, "model.safetensors")
		mustWrite(t, p, st)
		mustWrite(t, filepath.Join(dir, "config.json"), []byte(fmt.Sprintf(`{"rope_theta": %d}`, 10000*(1+c.rng.IntN(2)))))
		c.folders = append(c.folders, dir)
		c.folderModels = append(c.folderModels, p)
		c.scanned = append(c.scanned, p)
	default: // a byte copy of one of them: a file, or a folder whole
		if len(c.infos)+len(c.folderModels) == 0 {
			return
		}
		if k := c.rng.IntN(len(c.infos) + len(c.folderModels)); k < len(c.infos) {
			from := c.infos[k]
			b, _ := os.ReadFile(from)
			p := c.next("infocopy") + filepath.Ext(from)
			info(p, b)
			c.copies = append(c.copies, [2]string{from, p})
		} else {
			from := c.folderModels[k-len(c.infos)]
			dir := c.next("foldercopy")
			for _, name := range []string{"model.safetensors", "config.json"} {
				b, _ := os.ReadFile(filepath.Join(filepath.Dir(from), name))
				mustWrite(t, filepath.Join(dir, name), b)
			}
			p := filepath.Join(dir, "model.safetensors")
			c.folders = append(c.folders, dir)
			c.folderModels = append(c.folderModels, p)
			c.scanned = append(c.scanned, p)
			c.copies = append(c.copies, [2]string{from, p})
		}
	}
}

// companionsOf are the other regular files of the folder of path when it is a model folder (it holds
// config.json), as the test sees them.
func companionsOf(path string) []string {
	dir := filepath.Dir(path)
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil || strings.HasSuffix(path, ".safetensors.index.json") {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && p != filepath.Clean(path) {
			out = append(out, p)
		}
	}
	return out
}

// folderState is what a folder holds: its regular files' names and bytes, in name order.
func folderState(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var parts []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			parts = append(parts, fmt.Sprintf("%s:%x", e.Name(), sha256.Sum256(b)))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// folderStates are the states of c's folders.
func (c *collection) folderStates() map[string]string {
	out := map[string]string{}
	for _, d := range c.folders {
		out[d] = folderState(d)
	}
	return out
}

// checkFolders checks that every folder's files of before still exist together, byte for byte, in
// some folder of the collection after act.
func (c *collection) checkFolders(before map[string]string, act string) {
	c.t.Helper()
	now := map[string]bool{}
	filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			now[folderState(p)] = true
		}
		return nil
	})
	for d, s := range before {
		if !now[s] {
			c.t.Errorf("after %s no folder holds what %s held (%s)", act, d, s)
		}
	}
}
