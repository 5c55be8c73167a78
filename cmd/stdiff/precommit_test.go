package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreCommitHook installs the project's pre-commit hook (.pre-commit-hooks.yaml) the way a user
// does: a repository's .pre-commit-config.yaml names the stdiff repository (here a copy of this
// working tree, committed) and a revision; pre-commit builds stdiff with Go and runs `stdiff check` on
// the staged model files. A good file commits; a Git LFS pointer, a NUL-padded header and a truncated
// file are refused, each named. It needs git, go and pre-commit (Debian's package) and skips where one
// is missing; it reads no network (GOPROXY=off: the modules come from the local cache).
func TestPreCommitHook(t *testing.T) {
	for _, tool := range []string{"git", "go", "pre-commit"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	if testing.Short() {
		t.Skip("builds stdiff: not with -short")
	}
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PRE_COMMIT_HOME="+t.TempDir(), "GOMODCACHE="+strings.TrimSpace(string(modcache)),
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "NO_COLOR=1")
	sh := func(dir string, args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(dir string, args ...string) string {
		t.Helper()
		out, err := sh(dir, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// The hook's repository: this working tree's sources, committed (pre-commit clones a revision).
	hooks := t.TempDir()
	root := filepath.Join("..", "..")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return fs.SkipDir
			}
			return os.MkdirAll(filepath.Join(hooks, rel), 0o755)
		}
		// the sources and what they embed (canon/gguf/hfmap's table), tests and their data aside
		if keep := rel == ".pre-commit-hooks.yaml" || !strings.HasPrefix(d.Name(), ".") && !strings.HasSuffix(rel, "_test.go"); !keep {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(hooks, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	must(hooks, "git", "init", "-q")
	must(hooks, "git", "add", "-A")
	must(hooks, "git", "commit", "-q", "-m", "stdiff")
	rev := strings.TrimSpace(must(hooks, "git", "rev-parse", "HEAD"))

	// A repository of models that uses the hook.
	work := t.TempDir()
	must(work, "git", "init", "-q")
	config := "repos:\n  - repo: " + hooks + "\n    rev: " + rev + "\n    hooks:\n      - id: stdiff-check\n"
	if err := os.WriteFile(filepath.Join(work, ".pre-commit-config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	must(work, "pre-commit", "install")
	fixtures := fixtures()
	add := func(name, fixture string) {
		if err := os.WriteFile(filepath.Join(work, name), fixtures[fixture], 0o644); err != nil {
			t.Fatal(err)
		}
		must(work, "git", "add", name, ".pre-commit-config.yaml")
	}

	add("model.safetensors", "base.safetensors")
	add("lora.safetensors", "lora.safetensors")
	if out, err := sh(work, "git", "commit", "-m", "good models"); err != nil {
		t.Fatalf("good files were refused: %v\n%s", err, out)
	}

	add("pointer.safetensors", "lfs-pointer.safetensors")
	add("padded.safetensors", "nul-padded.safetensors")
	add("cut.safetensors", "truncated.safetensors")
	out, err := sh(work, "git", "commit", "-m", "broken models")
	if err == nil {
		t.Fatalf("broken files were committed:\n%s", out)
	}
	for _, want := range []string{"stdiff check", "pointer.safetensors: INVALID", "Git LFS pointer", "padded.safetensors: INVALID",
		"nul-padding", "stdiff check --fix", "cut.safetensors: INVALID"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if log := must(work, "git", "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("commits:\n%s", log)
	}

	// Shards are staged files like any other: each reported once, under its own name.
	must(work, "git", "reset", "-q")
	for _, name := range []string{"pointer.safetensors", "padded.safetensors", "cut.safetensors"} {
		os.Remove(filepath.Join(work, name))
	}
	add("m-00001-of-00002.safetensors", "base.safetensors")
	add("m-00002-of-00002.safetensors", "nul-padded.safetensors")
	out, err = sh(work, "git", "commit", "-m", "a shard set")
	if err == nil {
		t.Fatalf("a NUL-padded shard was committed:\n%s", out)
	}
	if strings.Count(out, "m-00002-of-00002.safetensors: INVALID") != 1 || strings.Count(out, "nul-padding") != 1 ||
		!strings.Contains(out, "m-00001-of-00002.safetensors: OK") || strings.Contains(out, "tensor-in-two-shards") {
		t.Errorf("each staged shard is not reported once under its own name:\n%s", out)
	}
}
