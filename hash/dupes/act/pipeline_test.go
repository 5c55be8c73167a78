package act

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stdiff/stdiff/canon/dduf/ddufw"
	"github.com/stdiff/stdiff/hash/dupes"
)

// pipelineDir writes ddufw's pipeline as a folder dir/name, with change applied to its members
// first, and returns the folder.
func pipelineDir(t *testing.T, dir, name string, change func([]ddufw.Member) []ddufw.Member) string {
	t.Helper()
	ms := ddufw.Pipeline()
	if change != nil {
		ms = change(ms)
	}
	p := filepath.Join(dir, name)
	if err := ddufw.WriteFolder(p, ms); err != nil {
		t.Fatal(err)
	}
	return p
}

// pipelineFile writes ddufw's pipeline as the DDUF file dir/name, with change applied to its members.
func pipelineFile(t *testing.T, dir, name string, change func([]ddufw.Member) []ddufw.Member) string {
	t.Helper()
	ms := ddufw.Pipeline()
	if change != nil {
		ms = change(ms)
	}
	p := filepath.Join(dir, name)
	mustWrite(t, p, ddufw.Write(ms))
	return p
}

// setMember sets member name's bytes (adding it when there is none).
func setMember(name string, b []byte) func([]ddufw.Member) []ddufw.Member {
	return func(ms []ddufw.Member) []ddufw.Member {
		for i := range ms {
			if ms[i].Name == name {
				ms[i].Data = b
				return ms
			}
		}
		return append(ms, ddufw.Member{Name: name, Data: b})
	}
}

// pipelineGroups are rep's groups with a pipeline folder.
func pipelineGroups(rep *dupes.Report) []dupes.Group {
	var out []dupes.Group
	for _, g := range rep.Groups {
		if slices.ContainsFunc(g.Members, func(m dupes.Member) bool { return m.Pipeline }) {
			out = append(out, g)
		}
	}
	return out
}

// TestDDUFAndItsFolder (issue 34, item 6): a DDUF file and the diffusers pipeline folder of its very
// files (every member a file of the folder, name for name and byte for byte) are one content group,
// the folder one member named by its model_index.json, kept by default (pipeline-folder); --delete
// deletes the DDUF file, --link nothing (a folder and a zip share no file to link), and a keep rule
// that names the DDUF file's folder deletes the pipeline folder whole, leaving nothing of it behind.
func TestDDUFAndItsFolder(t *testing.T) {
	dir := t.TempDir()
	folder := pipelineDir(t, filepath.Join(dir, "folders"), "pipe", nil)
	file := pipelineFile(t, filepath.Join(dir, "files"), "pipe.dduf", nil)
	index := filepath.Join(folder, "model_index.json")
	find := func(keep dupes.KeepRule) *dupes.Report {
		t.Helper()
		rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := find(dupes.KeepRule{})
	gs := pipelineGroups(rep)
	if len(gs) != 1 {
		t.Fatalf("groups %+v, want a DDUF file and its folder", rep.Groups)
	}
	g := gs[0]
	if g.Level != dupes.LevelContent || !slices.Equal(g.Files, []string{index, file}) || g.Keeper != index ||
		g.KeeperReason != dupes.ReasonPipeline || !g.Members[0].Pipeline || len(g.Members[0].Companions) != 11 ||
		g.Members[1].Format != "dduf" || g.Reclaimable != g.Members[1].Size {
		t.Fatalf("group %+v", g)
	}
	if !rep.ActsOn(&g, false) || rep.ActsOn(&g, true) {
		t.Errorf("ActsOn: delete %v, link %v; want delete only", rep.ActsOn(&g, false), rep.ActsOn(&g, true))
	}
	if got := text(t, rep); !strings.Contains(got, "pipeline folder") {
		t.Errorf("the text does not say the folder is a pipeline's:\n%s", got)
	}
	if r, err := Act(t.Context(), rep, Options{Link: true}); err != nil || r.Linked != 0 || slices.ContainsFunc(r.Actions, func(a Action) bool { return a.Path == file }) {
		t.Errorf("link: %v, %+v", err, r)
	}
	// A report that calls them byte copies (edited by hand) links nothing either way.
	for _, keeper := range []int{0, 1} {
		bytesGroup := g
		bytesGroup.Level, bytesGroup.Members = dupes.LevelBytes, []dupes.Member{g.Members[keeper], g.Members[1-keeper]}
		bytesGroup.Keeper, bytesGroup.Files = bytesGroup.Members[0].Path, []string{bytesGroup.Members[0].Path, bytesGroup.Members[1].Path}
		r, err := Act(t.Context(), &dupes.Report{Groups: []dupes.Group{bytesGroup}}, Options{Link: true})
		if err != nil || r.Linked != 0 || r.Failed != 0 {
			t.Errorf("link as bytes, keeping %s: %v, %+v", bytesGroup.Keeper, err, r.Actions)
		}
	}
	if st, err := os.Stat(index); err != nil || st.Size() != int64(len(ddufw.Index)) {
		t.Errorf("model_index.json: %v", err)
	}
	if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() || st.Size() != g.Members[1].Size {
		t.Errorf("the DDUF file: %v", err)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 1 || r.Actions[0].Path != file || !slices.Equal(r.Actions[0].Files, []string{file}) {
		t.Fatalf("delete: %v, %+v", err, r)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the DDUF file is still there")
	}
	for _, m := range ddufw.Pipeline() {
		if _, err := os.Stat(filepath.Join(folder, filepath.FromSlash(m.Name))); err != nil {
			t.Error(err)
		}
	}

	// Kept by a rule: the DDUF file; the folder goes whole, and nothing is left beside it.
	pipelineFile(t, filepath.Join(dir, "files"), "pipe.dduf", nil)
	rep = find(dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "files")})
	if gs := pipelineGroups(rep); len(gs) != 1 || gs[0].Keeper != file || gs[0].KeeperReason != dupes.ReasonPathPrefix {
		t.Fatalf("groups %+v", rep.Groups)
	}
	r, err = Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 1 || r.Actions[0].Path != index || len(r.Actions[0].Files) != 12 || r.Actions[0].Freed == 0 {
		t.Fatalf("delete: %v, %+v", err, r)
	}
	if _, err := os.Stat(folder); err == nil {
		t.Error("the pipeline folder is still there")
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "folders")); len(left) != 0 {
		t.Errorf("left beside the folder: %v", left)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}

// TestDDUFAndFolderNotCopies (issue 34, item 6): a DDUF file and a pipeline folder with the same
// weights, byte for byte, are no copies when any other file differs — a config byte, a file the
// folder has and the archive lacks, a member the folder lacks — and a note says which
// (pipeline-differs); with other weights they are neither grouped nor noted. Nothing is deleted.
func TestDDUFAndFolderNotCopies(t *testing.T) {
	for _, c := range []struct {
		name         string
		folder, file func([]ddufw.Member) []ddufw.Member
		diff         dupes.FileDifference
	}{
		{"config", setMember("unet/config.json", []byte(`{"_class_name": "UNet2DConditionModel", "in_channels": 9}`+"\n")), nil,
			dupes.FileDifference{Name: "unet/config.json", Change: "other-bytes"}},
		{"folder-extra", setMember("README.md", []byte("# pipe\n")), nil, dupes.FileDifference{Name: "README.md", Change: "folder-only"}},
		{"archive-extra", nil, setMember("tokenizer/merges.txt", []byte("a b\n")), dupes.FileDifference{Name: "tokenizer/merges.txt", Change: "archive-only"}},
		{"tensor", setMember("unet/diffusion_pytorch_model.safetensors", ddufw.Weights("unet", 2)), nil, dupes.FileDifference{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			folder := pipelineDir(t, dir, "pipe", c.folder)
			file := pipelineFile(t, dir, "pipe.dduf", c.file)
			rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if gs := pipelineGroups(rep); len(gs) != 0 {
				t.Errorf("grouped: %+v", gs)
			}
			var notes []dupes.Note
			for _, n := range rep.Notes {
				if n.Code == dupes.NotePipelineDiffers {
					notes = append(notes, n)
				}
			}
			want := 1
			if c.diff.Name == "" {
				want = 0
			}
			if len(notes) != want || want == 1 && (notes[0].Path != filepath.Join(folder, "model_index.json") ||
				!slices.Equal(notes[0].With, []string{file}) || !slices.Equal(notes[0].Files, []dupes.FileDifference{c.diff})) {
				t.Errorf("notes %+v, want %d naming %+v", rep.Notes, want, c.diff)
			}
			if r, err := Act(t.Context(), rep, Options{Delete: true}); err != nil || r.Deleted != 0 {
				t.Errorf("act: %v, %+v", err, r)
			}
			for _, p := range []string{file, filepath.Join(folder, "model_index.json"), filepath.Join(folder, "unet", "config.json")} {
				if _, err := os.Stat(p); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestDDUFFolderChangedAfterScan (issue 34, item 6): what changes after the scan is found before
// anything goes, and the group is left whole. A folder file edited after the scan (same size, so
// that only its bytes tell) makes the DDUF file no copy; one edited between the last check and the
// deletion (actHook) sends the folder, moved aside, back where it was, every file in it, and when the
// folder is the keeper, leaves the DDUF file (keeper-changed).
func TestDDUFFolderChangedAfterScan(t *testing.T) {
	dir := t.TempDir()
	folder := pipelineDir(t, filepath.Join(dir, "folders"), "pipe", nil)
	file := pipelineFile(t, filepath.Join(dir, "files"), "pipe.dduf", nil)
	vae := filepath.Join(folder, "vae", "config.json")
	b, err := os.ReadFile(vae)
	if err != nil {
		t.Fatal(err)
	}
	edit := func() {
		mustWrite(t, vae, []byte(strings.Replace(string(b), `"latent_channels": 4`, `"latent_channels": 8`, 1)))
		os.Chtimes(vae, time.Now(), time.Now().Add(time.Hour))
	}
	for _, keep := range []string{"folders", "files"} {
		mustWrite(t, vae, b)
		rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, keep)}})
		if err != nil || len(pipelineGroups(rep)) != 1 {
			t.Fatalf("%v, %+v", err, rep.Groups)
		}
		edit()
		r, err := Act(t.Context(), rep, Options{Delete: true})
		if err != nil || r.Deleted != 0 || len(r.Actions) != 1 || r.Actions[0].Reason != SkipNotACopy {
			t.Errorf("keeping %s, edited after the scan: %v, %+v", keep, err, r.Actions)
		}
	}
	// Edited between the check and the deletion: the folder goes back, whole.
	mustWrite(t, vae, b)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "files")}})
	if err != nil || len(pipelineGroups(rep)) != 1 {
		t.Fatalf("%v, %+v", err, rep.Groups)
	}
	actHook = func(stage string) {
		if stage == "act" {
			edit()
		}
	}
	defer func() { actHook = nil }()
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 0 || len(r.Actions) != 1 || r.Actions[0].Reason != SkipChanged {
		t.Errorf("edited before the deletion: %v, %+v", err, r.Actions)
	}
	for _, m := range ddufw.Pipeline() {
		if _, err := os.Stat(filepath.Join(folder, filepath.FromSlash(m.Name))); err != nil {
			t.Error(err)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "folders")); len(left) != 1 {
		t.Errorf("beside the folder: %v", left)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
	// The folder kept, edited between the check and the deletion of the DDUF file: it stays.
	mustWrite(t, vae, b)
	rep, err = dupes.Find(t.Context(), []string{dir}, dupes.Options{})
	if err != nil || len(pipelineGroups(rep)) != 1 {
		t.Fatalf("%v, %+v", err, rep.Groups)
	}
	r, err = Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 0 || len(r.Actions) != 1 || r.Actions[0].Reason != SkipKeeperChanged {
		t.Errorf("the folder kept edited before the deletion: %v, %+v", err, r.Actions)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}

// TestHostileDDUFNeverACopy (issue 34, item 6): a DDUF file the DDUF rules reject — a member named
// twice (readers differ on which they load), a ".." member, an encrypted member — beside the folder of
// the pipeline it seems to hold is never its copy: the scan leaves it out, and a report that says
// otherwise (an older stdiff's, or one edited by hand) is checked again by Act, which deletes neither.
func TestHostileDDUFNeverACopy(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func([]ddufw.Member) []ddufw.Member
	}{
		{"duplicate", func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "unet/config.json", Data: []byte(`{"in_channels": 9}`)})
		}},
		{"dotdot", func(ms []ddufw.Member) []ddufw.Member {
			return append(ms, ddufw.Member{Name: "unet/../unet/config.json", Data: ms[8].Data})
		}},
		{"encrypted", func(ms []ddufw.Member) []ddufw.Member {
			ms[8].Encrypted = true
			return ms
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			folder := pipelineDir(t, dir, "pipe", nil)
			file := pipelineFile(t, dir, "pipe.dduf", c.change)
			rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if gs := pipelineGroups(rep); len(gs) != 0 || len(rep.Notes) != 0 {
				t.Errorf("grouped: %+v, notes %+v", gs, rep.Notes)
			}
			index := filepath.Join(folder, "model_index.json")
			for _, keeper := range []string{index, file} {
				g := dupes.Group{Level: dupes.LevelContent, Keeper: keeper}
				for _, p := range []string{keeper, map[string]string{index: file, file: index}[keeper]} {
					st, _ := os.Stat(p)
					g.Files = append(g.Files, p)
					g.Members = append(g.Members, dupes.Member{Path: p, Size: st.Size(), ModTime: st.ModTime(), Pipeline: p == index})
				}
				r, err := Act(t.Context(), &dupes.Report{Groups: []dupes.Group{g}}, Options{Delete: true})
				if err != nil || r.Deleted != 0 || len(r.Actions) != 1 || r.Actions[0].Reason != SkipNotACopy {
					t.Errorf("keeping %s: %v, %+v", keeper, err, r.Actions)
				}
			}
			for _, p := range []string{file, index, filepath.Join(folder, "unet", "config.json")} {
				if _, err := os.Stat(p); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestExportedDDUFAndItsFolder (issue 34, item 6): the DDUF file huggingface_hub's
// export_folder_as_dduf way of writing made (Python's zipfile, zip64 local headers:
// canon/dduf/testdata/export-zip64.dduf, from ddufw's pipeline folder) groups with that folder, and
// goes whole.
func TestExportedDDUFAndItsFolder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "canon", "dduf", "testdata", "export-zip64.dduf"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	folder := pipelineDir(t, dir, "pipe", nil)
	file := filepath.Join(dir, "export.dduf")
	mustWrite(t, file, b)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if gs := pipelineGroups(rep); len(gs) != 1 || !slices.Equal(gs[0].Files, []string{filepath.Join(folder, "model_index.json"), file}) {
		t.Fatalf("groups %+v, notes %+v", rep.Groups, rep.Notes)
	}
	if r, err := Act(t.Context(), rep, Options{Delete: true}); err != nil || r.Deleted != 1 || r.Actions[0].Path != file {
		t.Fatalf("act: %v, %+v", err, r)
	}
}

// TestDDUFCopiesAndTheirFolder (issue 34, item 6): a byte copy of a DDUF file and an archive of the
// same members in another order join the folder's group (each holds its very files); the bytes group
// of the two identical files is inside it, so --delete deletes each DDUF file once, keeping the folder.
func TestDDUFCopiesAndTheirFolder(t *testing.T) {
	dir := t.TempDir()
	folder := pipelineDir(t, dir, "pipe", nil)
	a := pipelineFile(t, dir, "a.dduf", nil)
	b := pipelineFile(t, dir, "b.dduf", func(ms []ddufw.Member) []ddufw.Member { slices.Reverse(ms); return ms })
	e := pipelineFile(t, dir, "e.dduf", nil)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(folder, "model_index.json")
	if gs := pipelineGroups(rep); len(gs) != 1 || !slices.Equal(gs[0].Files, []string{index, a, b, e}) || rep.Reclaimable != gs[0].Reclaimable {
		t.Fatalf("groups %+v, %d reclaimable", rep.Groups, rep.Reclaimable)
	}
	r, err := Act(t.Context(), rep, Options{Delete: true})
	if err != nil || r.Deleted != 3 || r.Failed != 0 || r.Skipped != 0 {
		t.Fatalf("act: %v, %+v", err, r.Actions)
	}
	for _, p := range []string{a, b, e} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(folder, "unet", "diffusion_pytorch_model.safetensors")); err != nil {
		t.Error(err)
	}
}

// TestPipelineFolderWithALink (issue 34, item 6): a pipeline folder with a symbolic link among its
// files (to a file of the same bytes) is no copy of a DDUF file, whose members are files: the note
// says not-a-file, and nothing is deleted.
func TestPipelineFolderWithALink(t *testing.T) {
	dir := t.TempDir()
	folder := pipelineDir(t, filepath.Join(dir, "folders"), "pipe", nil)
	file := pipelineFile(t, filepath.Join(dir, "files"), "pipe.dduf", nil)
	vocab := filepath.Join(folder, "tokenizer", "vocab.txt")
	outside := filepath.Join(t.TempDir(), "vocab.txt")
	mustWrite(t, outside, []byte("a\nb\n"))
	if err := os.Remove(vocab); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, outside, vocab)
	rep, err := dupes.Find(t.Context(), []string{dir}, dupes.Options{Keep: dupes.KeepRule{Kind: dupes.KeepPath, Prefix: filepath.Join(dir, "files")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []dupes.FileDifference{{Name: "tokenizer/vocab.txt", Change: "not-a-file"}}
	if len(pipelineGroups(rep)) != 0 || len(rep.Notes) != 1 || !slices.Equal(rep.Notes[0].Files, want) {
		t.Fatalf("groups %+v, notes %+v", rep.Groups, rep.Notes)
	}
	if r, err := Act(t.Context(), rep, Options{Delete: true}); err != nil || r.Deleted != 0 {
		t.Errorf("act: %v, %+v", err, r)
	}
	if _, err := os.Stat(filepath.Join(folder, "model_index.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}
