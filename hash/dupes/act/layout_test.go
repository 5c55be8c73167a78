//go:build unix

package act

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stdiff/stdiff/hash/dupes"
	"github.com/stdiff/stdiff/hash/dupes/internal/dupetest"
)

// hfCache lays out revisions the way the Hugging Face cache does: snapshots/<rev>/<file> are symbolic
// links to blobs/<hash of the content>, so revisions with equal files share blobs. Each revision is
// {a, b, note} as for shardSet. It returns the revisions' index paths.
func hfCache(t *testing.T, dir string, revs ...[3]int64) []string {
	t.Helper()
	var indexes []string
	for r, rev := range revs {
		note := ""
		if rev[2] != 0 {
			note = fmt.Sprint(rev[2])
		}
		s1, s2, idx := shardSet(rev[0], rev[1], note)
		snap := filepath.Join(dir, "snapshots", fmt.Sprintf("rev%d", r))
		for name, b := range map[string][]byte{setShard1: s1, setShard2: s2, setIndex: idx} {
			blob := fmt.Sprintf("%x", sha256.Sum256(b))
			mustWrite(t, filepath.Join(dir, "blobs", blob), b)
			mustSymlink(t, filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name))
		}
		indexes = append(indexes, filepath.Join(snap, setIndex))
	}
	return indexes
}

func scan(t *testing.T, paths ...string) *dupes.Report {
	t.Helper()
	rep, err := dupes.Find(context.Background(), paths, dupes.Options{Level: dupes.LevelStructure})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSharedShardsAreNotCopies: two revisions in the Hugging Face cache whose indexes differ but whose
// shards are the same blobs are one set of weights on disk: deleting either "copy" with its shards
// would delete the other's weights. They are noted, never grouped, and nothing is reclaimable.
func TestSharedShardsAreNotCopies(t *testing.T) {
	dir := t.TempDir()
	revs := hfCache(t, dir, [3]int64{1, 2, 0}, [3]int64{1, 2, 7})
	rep := scan(t, revs...)
	for _, g := range rep.Groups {
		if g.Level != dupes.LevelStructure {
			t.Errorf("%s group of revisions that share their shards: %+v", g.Level, g.Files)
		}
	}
	if rep.Reclaimable != 0 {
		t.Errorf("%d bytes reclaimable", rep.Reclaimable)
	}
	if len(rep.Notes) != 2 || rep.Notes[0].Code != dupes.NoteSharesFiles || rep.Notes[0].Path != revs[0] ||
		fmt.Sprint(rep.Notes[0].With) != fmt.Sprint([]string{revs[1]}) {
		t.Errorf("notes %+v", rep.Notes)
	}
	// Two indexes in one folder naming the same shards: the same.
	two := filepath.Join(dir, "two")
	first := writeSet(t, two, 1, 2, "")
	_, _, idx := shardSet(1, 2, "other")
	second := filepath.Join(two, "other.safetensors.index.json")
	mustWrite(t, second, idx)
	if rep := scan(t, first, second); rep.Reclaimable != 0 || len(rep.Notes) != 2 || len(rep.Groups) != 0 {
		t.Errorf("two indexes of one set: groups %+v, notes %+v", rep.Groups, rep.Notes)
	}
}

// TestSnapshotsOfOneRevision: snapshots whose index and shards are all the same blobs are one model,
// reported like a link; one whose index is the same blob but whose shards differ is another model.
func TestSnapshotsOfOneRevision(t *testing.T) {
	revs := hfCache(t, t.TempDir(), [3]int64{1, 2, 0}, [3]int64{1, 2, 0}, [3]int64{1, 3, 0})
	rep := scan(t, revs...)
	if rep.Files != 2 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != revs[1] ||
		rep.Skipped[0].Reason != "same model as "+revs[0]+" (the same files, through links)" {
		t.Errorf("%d models, skipped %+v", rep.Files, rep.Skipped)
	}
	if len(rep.Notes) != 2 || rep.Notes[1].Path != revs[2] {
		t.Errorf("notes %+v", rep.Notes)
	}
}

// TestSetCopyReclaimsItsFiles: a real copy of a set is found, the set that shares files is the one
// kept, and what deleting the copy frees is its index and shards as they are on disk.
func TestSetCopyReclaimsItsFiles(t *testing.T) {
	dir := t.TempDir()
	revs := hfCache(t, filepath.Join(dir, "hub"), [3]int64{1, 2, 0}, [3]int64{1, 3, 0})
	cp := writeSet(t, filepath.Join(dir, "a-copy"), 1, 2, "")
	rep := scan(t, append(revs, cp)...)
	var size int64
	for _, name := range []string{setShard1, setShard2, setIndex} {
		st, _ := os.Stat(filepath.Join(dir, "a-copy", name))
		size += st.Size()
	}
	if len(rep.Groups) < 1 || rep.Groups[0].Level != dupes.LevelBytes || rep.Groups[0].Keeper != revs[0] ||
		len(rep.Groups[0].Files) != 2 || rep.Groups[0].Members[1].Path != cp || rep.Groups[0].Reclaimable != size ||
		rep.Groups[0].Members[1].Size != size || rep.Reclaimable != size {
		t.Errorf("groups %+v, reclaimable %d, want the copy's %d bytes", rep.Groups, rep.Reclaimable, size)
	}
}

// TestShardAloneIsNotACopyOfItsSet: a shard named on its own (or linked from elsewhere) is a file of a
// scanned set; grouped with a copy of itself, it is the one kept.
func TestShardAloneIsNotACopyOfItsSet(t *testing.T) {
	dir := t.TempDir()
	set := writeSet(t, filepath.Join(dir, "set"), 1, 2, "")
	alone := filepath.Join(dir, "loras", "alone.safetensors")
	mustSymlink(t, filepath.Join("..", "set", setShard1), alone)
	s1, _, _ := shardSet(1, 2, "")
	cp := filepath.Join(dir, "loras", "copy.safetensors")
	mustWrite(t, cp, s1)
	rep := scan(t, set, alone, cp)
	if len(rep.Groups) != 1 || rep.Groups[0].Keeper != alone || rep.Groups[0].Members[1].Path != cp {
		t.Errorf("groups %+v", rep.Groups)
	}
	if len(rep.Notes) != 2 || rep.Notes[0].Path != alone || rep.Notes[1].Path != set {
		t.Errorf("notes %+v", rep.Notes)
	}
	// Named as well by its real path, the shard is that path, and the link the same file.
	shard := filepath.Join(dir, "set", setShard1)
	rep = scan(t, set, alone, shard, cp)
	if len(rep.Groups) != 1 || rep.Groups[0].Keeper != shard || len(rep.Skipped) != 1 || rep.Skipped[0].Path != alone {
		t.Errorf("groups %+v, skipped %+v", rep.Groups, rep.Skipped)
	}
}

// collection is a random layout of models (see TestDupesNeverDeleteTheLastCopy).
type collection struct {
	t   *testing.T
	dir string
	rng *rand.Rand
	// scanned are the paths given to Find; copies pairs of them that are independent copies
	// of the same bytes (fresh files).
	scanned []string
	copies  [][2]string
	plain   []string
	sets    []string
	n       int
	// more are models made of more than tensors or of several files (addMore).
	more []string
	// infos are files that hold more than their tensors, folders model folders and folderModels their
	// weights (addInfo).
	infos, folders, folderModels []string
	// values are the information of each file of addValues by its bytes' SHA-256, valuePaths those
	// files.
	values     map[[32]byte]string
	valuePaths []string
	// sidecars are the sidecar files made (their bytes are unique); stores the folders of programs'
	// stores (Hugging Face cache repositories, ollama's models folder) and managed the scanned paths in
	// them.
	sidecars []string
	stores   []string
	managed  map[string]bool
	// seed made the collection (odd: scanned at LevelDerived); derivations are addDerived's originals
	// and the copies derived from them.
	seed        uint64
	derivations [][2]string
}

// sidecar writes a sidecar with bytes no other file has at path, or a symbolic link at path to the
// sidecar to, when to is not "".
func (c *collection) sidecar(path, to string) {
	if to != "" {
		mustSymlink(c.t, to, path)
		return
	}
	c.n++
	mustWrite(c.t, path, []byte(fmt.Sprintf(`{"id": %d}`, c.n)))
	c.sidecars = append(c.sidecars, path)
}

// copySidecars gives the model copy the sidecars of from, byte for byte.
func (c *collection) copySidecars(from, copy string) {
	for _, e := range []string{".civitai.info", ".preview.png"} {
		if b, err := os.ReadFile(strings.TrimSuffix(from, filepath.Ext(from)) + e); err == nil {
			mustWrite(c.t, strings.TrimSuffix(copy, filepath.Ext(copy))+e, b)
		}
	}
}

func (c *collection) next(kind string) string {
	c.n++
	return filepath.Join(c.dir, fmt.Sprintf("%s%d", kind, c.n))
}

func (c *collection) pick(from []string) string { return from[c.rng.IntN(len(from))] }

// add makes one random addition to the collection.
func (c *collection) add() {
	t := c.t
	switch op := c.rng.IntN(16); {
	case op == 0 || len(c.plain) == 0: // a file, with a sidecar or not; some of the same tensors in another format
		p := c.next("plain") + ".safetensors"
		b := loraFile(int64(c.rng.IntN(3)), fmt.Sprint(c.rng.IntN(2))).Build()
		if f := c.rng.IntN(3 * len(dupetest.Formats)); f < len(dupetest.Formats) { // named .safetensors: read by content
			b = dupetest.InFormat(dupetest.Formats[f], b)
		}
		mustWrite(t, p, b)
		if c.rng.IntN(3) == 0 {
			c.sidecar(strings.TrimSuffix(p, ".safetensors")+[]string{".civitai.info", ".preview.png"}[c.rng.IntN(2)], "")
		}
		c.plain = append(c.plain, p)
		c.scanned = append(c.scanned, p)
	case op == 1: // a byte copy of a file, with its sidecars, others or none
		from := c.pick(c.plain)
		b, _ := os.ReadFile(from)
		p := c.next("copy") + ".safetensors"
		mustWrite(t, p, b)
		switch c.rng.IntN(3) {
		case 0:
			c.copySidecars(from, p)
		case 1:
			c.sidecar(strings.TrimSuffix(p, ".safetensors")+".civitai.info", "")
		}
		c.plain = append(c.plain, p)
		c.scanned = append(c.scanned, p)
		c.copies = append(c.copies, [2]string{from, p})
	case op == 2: // a hard link
		p := c.next("hard") + ".safetensors"
		if err := os.Link(c.pick(c.plain), p); err != nil {
			t.Fatal(err)
		}
		c.plain = append(c.plain, p)
		c.scanned = append(c.scanned, p)
	case op == 3: // a symbolic link
		p := c.next("sym") + ".safetensors"
		mustSymlink(t, c.pick(c.plain), p)
		c.scanned = append(c.scanned, p)
	case op == 4: // a set in its own folder
		p := writeSet(t, c.next("set"), int64(c.rng.IntN(2)), int64(c.rng.IntN(2)), "")
		c.sets = append(c.sets, p)
		c.scanned = append(c.scanned, p)
	case op == 5 || op == 6: // a Hugging Face cache: revisions sharing some blobs
		var revs [][3]int64
		for r := 0; r < 2+c.rng.IntN(2); r++ {
			revs = append(revs, [3]int64{int64(c.rng.IntN(2)), int64(c.rng.IntN(3)), int64(c.rng.IntN(2))})
		}
		idx := hfCache(t, c.next("hf"), revs...)
		c.sets = append(c.sets, idx...)
		c.scanned = append(c.scanned, idx...)
	case op == 7: // a second index beside a set's, naming the same shards
		if len(c.sets) == 0 {
			return
		}
		set := c.pick(c.sets)
		b, _ := os.ReadFile(set)
		var idx map[string]any
		json.Unmarshal(b, &idx)
		idx["metadata"].(map[string]any)["note"] = c.n
		b, _ = json.Marshal(idx)
		p := filepath.Join(filepath.Dir(set), fmt.Sprintf("second%d.safetensors.index.json", c.n))
		c.n++
		mustWrite(t, p, b)
		c.scanned = append(c.scanned, p)
	case op == 8: // a copy of a set (links followed), in a fresh folder
		if len(c.sets) == 0 {
			return
		}
		set := c.pick(c.sets)
		dir := c.next("setcopy")
		for _, name := range []string{setShard1, setShard2} {
			b, _ := os.ReadFile(filepath.Join(filepath.Dir(set), name))
			mustWrite(t, filepath.Join(dir, name), b)
		}
		b, _ := os.ReadFile(set)
		mustWrite(t, filepath.Join(dir, filepath.Base(set)), b)
		c.scanned = append(c.scanned, filepath.Join(dir, filepath.Base(set)))
		c.copies = append(c.copies, [2]string{set, filepath.Join(dir, filepath.Base(set))})
	case op == 9: // a shard of a set, on its own: named, linked or copied
		if len(c.sets) == 0 {
			return
		}
		shard := filepath.Join(filepath.Dir(c.pick(c.sets)), setShard1)
		switch c.rng.IntN(3) {
		case 0:
			c.scanned = append(c.scanned, shard)
		case 1:
			p := c.next("shardlink") + ".safetensors"
			mustSymlink(t, shard, p)
			c.scanned = append(c.scanned, p)
		default:
			b, _ := os.ReadFile(shard)
			p := c.next("shardcopy") + ".safetensors"
			mustWrite(t, p, b)
			c.plain = append(c.plain, p)
			c.scanned = append(c.scanned, p)
		}
	case op == 11: // copies that share a stem, so a sidecar: another case of the extension, or an
		// extensionless GGUF beside a .gguf
		stem := c.next("stem")
		if c.rng.IntN(2) == 0 {
			b := loraFile(int64(c.rng.IntN(3)), "stem").Build()
			mustWrite(t, stem+".safetensors", b)
			mustWrite(t, stem+".SAFETENSORS", b)
			c.sidecar(stem+".civitai.info", "")
			c.scanned = append(c.scanned, stem+".safetensors", stem+".SAFETENSORS")
			c.copies = append(c.copies, [2]string{stem + ".safetensors", stem + ".SAFETENSORS"})
			return
		}
		b := ggufFile(fmt.Sprint(c.rng.IntN(2)))
		mustWrite(t, stem+".gguf", b)
		mustWrite(t, stem, b)
		c.sidecar(stem+".json", "")
		c.scanned = append(c.scanned, stem+".gguf", stem)
		c.copies = append(c.copies, [2]string{stem + ".gguf", stem})
	case op == 12: // two copies, the sidecar of one a link to the other's
		a, b := c.next("slink"), c.next("slink")
		data := loraFile(int64(c.rng.IntN(3)), "slink").Build()
		mustWrite(t, a+".safetensors", data)
		mustWrite(t, b+".safetensors", data)
		c.sidecar(b+".civitai.info", "")
		c.sidecar(a+".civitai.info", b+".civitai.info")
		c.scanned = append(c.scanned, a+".safetensors", b+".safetensors")
		c.plain = append(c.plain, a+".safetensors", b+".safetensors")
		c.copies = append(c.copies, [2]string{a + ".safetensors", b + ".safetensors"})
	case op == 13: // a file in a Hugging Face cache repository (a snapshot link to a blob), a copy of
		// a file or not, the blob scanned too or not
		hub := c.next("hub")
		from := c.pick(c.plain)
		b, _ := os.ReadFile(from)
		snap := hfRepo(t, hub, fmt.Sprintf("org/r%d", c.n), "x.safetensors", b)
		c.stores = append(c.stores, filepath.Join(hub, fmt.Sprintf("models--org--r%d", c.n)))
		c.scanned = append(c.scanned, snap)
		c.managed[snap] = true
		if c.rng.IntN(3) == 0 {
			blob, _ := filepath.EvalSymlinks(snap)
			c.scanned = append(c.scanned, blob)
			c.managed[blob] = true
		}
	case op == 14: // a GGUF in ollama's blobs and a copy of it in the user's folder
		models := filepath.Join(c.next("ollama"), "models")
		b := ggufFile(fmt.Sprint(c.rng.IntN(2)))
		blob := ollamaBlob(t, models, b)
		p := c.next("user") + ".gguf"
		mustWrite(t, p, b)
		c.stores = append(c.stores, models)
		c.managed[blob] = true
		c.scanned = append(c.scanned, blob, p)
		c.copies = append(c.copies, [2]string{blob, p})
	case op == 15: // a hard-linked pair, the sidecars on one path, and a copy of it
		lib, bare, cp := c.next("lib")+".safetensors", c.next("bare")+".safetensors", c.next("copy")+".safetensors"
		b := loraFile(int64(c.rng.IntN(3)), "pair").Build()
		mustWrite(t, lib, b)
		mustWrite(t, cp, b)
		c.sidecar(strings.TrimSuffix(lib, ".safetensors")+".civitai.info", "")
		if err := os.Link(lib, bare); err != nil {
			t.Fatal(err)
		}
		c.scanned = append(c.scanned, bare, lib, cp)
		c.copies = append(c.copies, [2]string{lib, cp})
	default: // a hard link to a shard, on its own
		if len(c.sets) == 0 {
			return
		}
		p := c.next("shardhard") + ".safetensors"
		shard, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(c.pick(c.sets)), setShard2))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Link(shard, p); err != nil {
			t.Fatal(err)
		}
		c.scanned = append(c.scanned, p)
	}
}

// realFile is a file as the test sees it, independently of the code under test.
type realFile struct{ dev, ino uint64 }

type fileInfo struct {
	size  int64
	nlink uint64
	// companion is the file's path when it is a model folder's companion (companionsOf).
	companion string
}

// filesOf are the real files a scanned path is made of (a set: its index and shards), with what
// deleting them would need to know.
func filesOf(t *testing.T, path string, info map[realFile]fileInfo) map[realFile]bool {
	t.Helper()
	paths := []string{path}
	if strings.HasSuffix(path, ".safetensors.index.json") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		json.Unmarshal(b, &idx)
		for _, shard := range idx.WeightMap {
			paths = append(paths, filepath.Join(filepath.Dir(path), shard))
		}
	}
	if split := splitFiles(path); split != nil {
		paths = split
	}
	out := map[realFile]bool{}
	companions := companionsOf(path)
	for i, p := range append(paths, companions...) {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		f := realFile{uint64(st.Dev), uint64(st.Ino)}
		out[f] = true
		info[f] = fileInfo{st.Size, uint64(st.Nlink), ""}
		if i >= len(paths) {
			info[f] = fileInfo{st.Size, uint64(st.Nlink), p}
		}
	}
	return out
}

func sameFiles(a, b map[realFile]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for f := range a {
		if !b[f] {
			return false
		}
	}
	return true
}

// bytesOf is what a model holds: a file's bytes, or a set's shards' bytes in shard order.
func bytesOf(t *testing.T, path string) []byte {
	if split := splitFiles(path); split != nil {
		var out []byte
		for _, p := range split {
			b, _ := os.ReadFile(p)
			out = append(out, b...)
		}
		return out
	}
	if !strings.HasSuffix(path, ".safetensors.index.json") {
		b, _ := os.ReadFile(path)
		return b
	}
	var out []byte
	for _, name := range []string{setShard1, setShard2} {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(path), name))
		out = append(out, b...)
	}
	return out
}

// TestDupesNeverDeleteTheLastCopy builds random collections (files with sidecars or none, some of them
// PyTorch checkpoints, zip or legacy, ONNX models or checkpoints whose pickle torch refuses, hard and
// symbolic links, sets, Hugging Face caches whose revisions share blobs, second indexes of one set,
// shards on their own, copies of all of these; copies that share a stem and so a sidecar, a sidecar
// that links to a copy's, Hugging Face cache repositories and ollama's blobs with copies outside,
// hard-linked pairs with the sidecars on one path; and addMore's models without tensors, GGUF files that
// differ in their tokenizer or template, split GGUF models and sets without an index, whole or in part)
// and checks every group Find reports: deleting every model of a bytes or content group but the first,
// with its shards (never a store's, and a symbolic link frees nothing), deletes no file of the first nor
// any file another scanned model needs (a path to the very same files aside); Reclaimable is exactly
// what that deletion frees, each real file once; independent copies are still found. After --delete and
// after --link, every sidecar's bytes are still in some file, every path of a store is as it was, its
// links resolving, every model of addMore still has a complete copy, byte for byte (checkSurvivors),
// and the information of every file of addValues (big-endian files beside little-endian ones of the same
// bytes, archives whose entry names collide, deflated strided views) is still held whole by some file
// (checkValues).
func TestDupesNeverDeleteTheLastCopy(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c := newCollection(t, seed)
			rep := c.scan()
			info := map[realFile]fileInfo{}
			files := map[string]map[realFile]bool{}
			for _, p := range c.scanned {
				files[p] = filesOf(t, p, info)
			}
			shared := map[string]bool{} // the test's own view of which models share files
			for _, p := range c.scanned {
				for _, q := range c.scanned {
					if p == q || sameFiles(files[p], files[q]) {
						continue
					}
					for f := range files[p] {
						if files[q][f] {
							shared[p] = true
						}
					}
				}
			}
			skipped := map[string]bool{}
			for _, s := range rep.Skipped {
				skipped[s.Path] = true
			}
			grouped := map[string]map[string]bool{} // path → paths it shares a group with
			counted := map[realFile]string{}
			var total int64
			for _, g := range rep.Groups {
				for _, f := range g.Members {
					if grouped[f.Path] == nil {
						grouped[f.Path] = map[string]bool{}
					}
					for _, o := range g.Members {
						grouped[f.Path][o.Path] = true
					}
				}
				if g.Level == dupes.LevelDerived { // a report: never acted on (addDerived's models survive)
					if g.Reclaimable != 0 || rep.ActsOn(&g, false) || rep.ActsOn(&g, true) || g.Keeper != g.Members[0].Path {
						t.Errorf("derived group acted on or without its original first: %+v", g)
					}
					continue
				}
				if g.Level == dupes.LevelStructure || g.Level == dupes.LevelRun {
					if g.Reclaimable != 0 || g.Keeper != "" {
						t.Errorf("%s group with a keeper or reclaimable bytes: %+v", g.Level, g)
					}
					continue
				}
				keeper := g.Members[0].Path
				if g.Keeper != keeper {
					t.Errorf("keeper %s is not the first of %+v", g.Keeper, g.Files)
				}
				deleted := map[realFile]bool{}
				for _, f := range g.Members[1:] {
					if c.managed[f.Path] || isLink(f.Path) { // never deleted; deleting a link frees nothing
						continue
					}
					for rf := range files[f.Path] {
						deleted[rf] = true
					}
					if g.Level == dupes.LevelBytes && !bytes.Equal(bytesOf(t, f.Path), bytesOf(t, keeper)) {
						t.Errorf("bytes group: %s and %s differ", f.Path, keeper)
					}
				}
				for _, p := range c.scanned {
					hit := false
					for rf := range files[p] {
						hit = hit || deleted[rf]
					}
					if !hit {
						continue
					}
					sameAsDeleted := false
					for _, f := range g.Members[1:] {
						sameAsDeleted = sameAsDeleted || sameFiles(files[p], files[f.Path])
					}
					if !sameAsDeleted {
						t.Errorf("deleting %s group but its first (%s) deletes a file of %s", g.Level, keeper, p)
					}
				}
				var want int64
				for rf := range deleted {
					if !files[keeper][rf] && info[rf].nlink == 1 {
						want += info[rf].size
					}
				}
				if g.Reclaimable != want {
					t.Errorf("%s group of %s: reclaimable %d, deleting frees %d", g.Level, keeper, g.Reclaimable, want)
				}
				if rep.ActsOn(&g, false) {
					total += g.Reclaimable
					for rf := range deleted {
						if other, ok := counted[rf]; ok {
							t.Errorf("a file is reclaimable in the groups of %s and %s", other, keeper)
						}
						counted[rf] = keeper
					}
				}
			}
			if rep.Reclaimable != total {
				t.Errorf("report reclaimable %d, its groups' %d", rep.Reclaimable, total)
			}
			for _, cp := range c.copies {
				a, b := cp[0], cp[1]
				if skipped[b] || shared[b] {
					continue
				}
				if len(grouped[b]) == 0 {
					t.Errorf("copy %s of %s not found", b, a)
				}
				if !skipped[a] && !shared[a] && !groupedAt(rep, dupes.LevelBytes, a, b) {
					t.Errorf("copies %s and %s not in one bytes group", a, b)
				}
			}
			for _, d := range c.derivations {
				if c.seed%2 == 1 && !groupedAt(rep, dupes.LevelDerived, d[0], d[1]) {
					t.Errorf("%s, derived from %s, not in its derived group", d[1], d[0])
				}
			}
			if t.Failed() {
				t.Logf("scanned %v\ngroups %+v\nnotes %+v\nskipped %+v", c.scanned, rep.Groups, rep.Notes, rep.Skipped)
				return
			}
			more, folders, values := c.contents(), c.folderStates(), c.valueKeys()
			checkDelete(t, c, rep, files)
			c.checkSurvivors(more, "--delete")
			c.checkFolders(folders, "--delete")
			c.checkValues(values, "--delete")
			c = newCollection(t, seed) // the same layout again, for --link
			more, folders, values = c.contents(), c.folderStates(), c.valueKeys()
			checkLink(t, c, c.scan())
			c.checkSurvivors(more, "--link")
			c.checkFolders(folders, "--link")
			c.checkValues(values, "--link")
			if c.seed%2 == 1 && len(c.derivations) > 0 { // --level derived --delete, asked for by name
				checkDeleteDerived(t, newCollection(t, seed))
			}
		})
	}
}

// isLink reports whether path is a symbolic link to a model in one file.
func isLink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSymlink != 0 && !strings.HasSuffix(path, ".safetensors.index.json")
}

// newCollection makes the random collection of seed.
func newCollection(t *testing.T, seed uint64) *collection {
	c := &collection{t: t, dir: t.TempDir(), rng: rand.New(rand.NewPCG(seed, 0)), managed: map[string]bool{}, seed: seed}
	for i := 0; i < 12+c.rng.IntN(10); i++ {
		c.add()
	}
	for i := 0; i < 4+c.rng.IntN(6); i++ {
		c.addMore()
	}
	for i := 0; i < 3+c.rng.IntN(6); i++ {
		c.addInfo()
	}
	for i := 0; i < 2+c.rng.IntN(4); i++ {
		c.addValues()
	}
	for i := 0; i < c.rng.IntN(3); i++ {
		c.addDerived()
	}
	return c
}

// scan scans the collection: at LevelDerived for odd seeds' collections that have derived copies
// (addDerived), else at LevelStructure.
func (c *collection) scan() *dupes.Report {
	c.t.Helper()
	level := dupes.LevelStructure
	if c.seed%2 == 1 {
		level = dupes.LevelDerived
	}
	rep, err := dupes.Find(context.Background(), c.scanned, dupes.Options{Level: level})
	if err != nil {
		c.t.Fatal(err)
	}
	return rep
}

// fileState is a real file's bytes and where it was seen.
type fileState struct {
	path string
	data []byte
}

// states are the bytes of every real file of the scanned models (a model folder's companions under
// their own paths).
func states(t *testing.T, files map[string]map[realFile]bool) map[realFile]fileState {
	out := map[realFile]fileState{}
	info := map[realFile]fileInfo{}
	for p := range files {
		filesOf(t, p, info)
	}
	for p, fs := range files {
		for rf := range fs {
			if _, ok := out[rf]; !ok {
				q := p
				if c := info[rf].companion; c != "" {
					q = c
				}
				out[rf] = fileState{q, bytesOfFile(t, rf, q)}
			}
		}
	}
	return out
}

// bytesOfFile reads the real file rf, found through the scanned model p (a file, or a set's index or
// shard).
func bytesOfFile(t *testing.T, rf realFile, p string) []byte {
	paths := []string{p}
	if strings.HasSuffix(p, ".safetensors.index.json") {
		paths = append(paths, filepath.Join(filepath.Dir(p), setShard1), filepath.Join(filepath.Dir(p), setShard2))
	}
	if split := splitFiles(p); split != nil {
		paths = split
	}
	for _, q := range paths {
		var st syscall.Stat_t
		if syscall.Stat(q, &st) == nil && (realFile{uint64(st.Dev), uint64(st.Ino)}) == rf {
			b, _ := os.ReadFile(q)
			return b
		}
	}
	t.Fatalf("no file %v under %s", rf, p)
	return nil
}

// checkDelete performs --delete on the collection Find reported on, and checks: it fails nowhere; no
// keeper's file changes; a file that goes is a file of a copy Act says it deleted, never a keeper's;
// every file that stays holds the bytes it held; every deleted copy's keeper is intact, and for a
// bytes group held the copy's very bytes.
func checkDelete(t *testing.T, c *collection, rep *dupes.Report, files map[string]map[realFile]bool) {
	t.Helper()
	before := states(t, files)
	models := map[string][]byte{}
	for _, p := range c.scanned {
		models[p] = bytesOf(t, p)
	}
	kept := keptState(t, c)
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Failed > 0 || r.Interrupted {
		t.Fatalf("act: %v, %+v", err, r)
	}
	kept.check(t, c, "--delete")
	keeperFiles := map[realFile]bool{}
	keeperOf := map[string]*dupes.Group{}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		if !rep.ActsOn(g, false) { // a bytes group inside a content group: the content group's keeper stays
			continue
		}
		for rf := range files[g.Keeper] {
			keeperFiles[rf] = true
		}
		for _, m := range g.Members[1:] {
			keeperOf[m.Path] = g
		}
	}
	deleted := map[realFile]bool{}
	for _, a := range r.Actions {
		if a.Op != OpDelete || !a.Done {
			continue
		}
		g := keeperOf[a.Path]
		if g == nil || g.Keeper != a.Keeper {
			t.Errorf("deleted %s, not a copy in a group of keeper %s", a.Path, a.Keeper)
			continue
		}
		for rf := range files[a.Path] {
			deleted[rf] = true
		}
		if g.Level == dupes.LevelBytes && !bytes.Equal(models[a.Path], models[g.Keeper]) {
			t.Errorf("deleted %s: not the bytes of its keeper %s", a.Path, g.Keeper)
		}
	}
	for rf, st := range before {
		var now syscall.Stat_t
		gone := syscall.Stat(st.path, &now) != nil || (realFile{uint64(now.Dev), uint64(now.Ino)}) != rf
		if strings.HasSuffix(st.path, ".safetensors.index.json") {
			gone = !stillThere(rf, st.path)
		}
		if split := splitFiles(st.path); split != nil {
			gone = !stillOneOf(rf, split)
		}
		switch {
		case gone && keeperFiles[rf]:
			t.Errorf("a file of a keeper went: %s", st.path)
		case gone && !deleted[rf]:
			t.Errorf("a file went that no deletion names: %v via %s", rf, st.path)
		case !gone && !bytes.Equal(bytesOfFile(t, rf, st.path), st.data):
			t.Errorf("a file that stays changed: %v via %s", rf, st.path)
		}
	}
}

// kept is what must outlast --delete and --link: the bytes of every sidecar, in some file, and every
// path of a program's store as it was. (What becomes of models checkDelete and checkLink say.)
type kept struct {
	contents map[[32]byte]string
	stores   map[string]storeEntry
}

// storeEntry is a path in a store as Lstat sees it: its file, type and link target.
type storeEntry struct {
	ino    uint64
	mode   os.FileMode
	target string
}

// contentsUnder are the bytes of every regular file under dir, by their SHA-256, with a path.
func contentsUnder(t *testing.T, dir string) map[[32]byte]string {
	out := map[[32]byte]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[sha256.Sum256(b)] = p
		}
		return nil
	})
	return out
}

func keptState(t *testing.T, c *collection) kept {
	k := kept{contents: map[[32]byte]string{}, stores: map[string]storeEntry{}}
	for _, p := range append(slices.Clone(c.sidecars), c.infos...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		k.contents[sha256.Sum256(b)] = p
	}
	for _, s := range c.stores {
		filepath.WalkDir(s, func(p string, d os.DirEntry, err error) error {
			var st syscall.Stat_t
			if err != nil || syscall.Lstat(p, &st) != nil {
				t.Fatalf("%s: %v", p, err)
			}
			target, _ := os.Readlink(p)
			k.stores[p] = storeEntry{uint64(st.Ino), d.Type(), target}
			return nil
		})
	}
	return k
}

// check says what of k did not outlast what (--delete, --link): bytes no file holds any more, a
// store's path gone, replaced or linked, or a store's link that no longer resolves.
func (k kept) check(t *testing.T, c *collection, what string) {
	t.Helper()
	now := contentsUnder(t, c.dir)
	for sum, p := range k.contents {
		if _, ok := now[sum]; !ok {
			t.Errorf("%s: the bytes of %s are gone", what, p)
		}
	}
	for p, e := range k.stores {
		var st syscall.Stat_t
		target, _ := os.Readlink(p)
		switch {
		case syscall.Lstat(p, &st) != nil:
			t.Errorf("%s: %s (a store's) went", what, p)
		case uint64(st.Ino) != e.ino || target != e.target:
			t.Errorf("%s: %s (a store's) replaced", what, p)
		case e.mode.IsRegular() && st.Nlink != 1:
			t.Errorf("%s: %s (a store's) linked", what, p)
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %s (a store's) no longer resolves: %v", what, p, err)
		}
	}
}

// stillThere reports whether the real file rf is still one of the files of the set at index.
func stillThere(rf realFile, index string) bool {
	for _, q := range []string{index, filepath.Join(filepath.Dir(index), setShard1), filepath.Join(filepath.Dir(index), setShard2)} {
		var st syscall.Stat_t
		if syscall.Stat(q, &st) == nil && (realFile{uint64(st.Dev), uint64(st.Ino)}) == rf {
			return true
		}
	}
	return false
}

// checkLink performs --link on the collection Find reported on, and checks: every scanned model holds
// the bytes it held; no keeper's file changes; every copy Act says it linked is now its keeper's
// file.
func checkLink(t *testing.T, c *collection, rep *dupes.Report) {
	t.Helper()
	before := map[string][]byte{}
	for _, p := range c.scanned {
		before[p] = bytesOf(t, p)
	}
	keepers := map[string]uint64{}
	for _, g := range rep.Groups {
		if g.Keeper != "" && g.Level != dupes.LevelDerived { // a derived group's original is no keeper: never acted on
			var st syscall.Stat_t
			syscall.Stat(g.Keeper, &st)
			keepers[g.Keeper] = uint64(st.Ino)
		}
	}
	kept := keptState(t, c)
	r, err := Act(t.Context(), rep, Options{Link: true})
	if err != nil || r.Failed > 0 {
		t.Fatalf("act: %v, %+v", err, r)
	}
	kept.check(t, c, "--link")
	for _, p := range c.scanned {
		if !bytes.Equal(bytesOf(t, p), before[p]) {
			t.Errorf("--link changed the bytes of %s", p)
		}
	}
	for k, ino := range keepers {
		var st syscall.Stat_t
		if syscall.Stat(k, &st) != nil || uint64(st.Ino) != ino {
			t.Errorf("keeper %s replaced", k)
		}
	}
	for _, a := range r.Actions {
		if a.Op == OpLink && a.Done {
			x, _ := os.Stat(a.Path)
			y, _ := os.Stat(a.Keeper)
			if !os.SameFile(x, y) {
				t.Errorf("%s not linked to %s", a.Path, a.Keeper)
			}
		}
	}
}

func groupedAt(rep *dupes.Report, level dupes.Level, a, b string) bool {
	for _, g := range rep.Groups {
		var n int
		for _, f := range g.Members {
			if f.Path == a || f.Path == b {
				n++
			}
		}
		if g.Level == level && n == 2 {
			return true
		}
	}
	return false
}
