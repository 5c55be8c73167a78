package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stdiff/stdiff/canon/dduf/ddufw"
	"github.com/stdiff/stdiff/canon/gguf/ggufw"
	"github.com/stdiff/stdiff/canon/source/hubtest"
	"github.com/stdiff/stdiff/canon/stfile"
	"github.com/stdiff/stdiff/canon/torch/torchw"
)

// corpusDir holds real files written by other projects (beside the project, never copied into it).
var corpusDir, _ = filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "real"))

func TestMain(m *testing.M) {
	// Under -race a process sleeps a second as it exits (the race runtime's atexit_sleep_ms), and the
	// scripts run hundreds of stdiff commands, each a process: theirs exit at once (testscript passes
	// GORACE on). A GORACE of the user's own comes after, so its options win.
	os.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
	testscript.Main(m, map[string]func(){
		"stdiff": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// stalled maps a served $URL to the channel `serve stall` closes at its first request.
var stalled sync.Map

// TestScripts runs the CLI end to end: testdata/script/*.txtar are specifications that read like
// documentation. Each script starts with the fixtures of ../../testdata in its work folder.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Condition: func(cond string) (bool, error) {
			if cond == "root" { // permissions do not stop root
				return os.Geteuid() == 0, nil
			}
			if cond == "corpus" { // the real files beside the project, in shared/
				_, err := os.Stat(corpusDir)
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			for name, b := range fixtures() {
				if err := os.WriteFile(filepath.Join(env.WorkDir, name), b, 0o644); err != nil {
					return err
				}
			}
			env.Setenv("NO_COLOR", "1")
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			env.Setenv("REPO", repo) // the project's root: scripts run files it holds (the GitHub action's)
			return err
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// mkfifo NAME
			"mkfifo": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
			},
			// sparse NAME SIZE SOURCE: a SIZE-byte sparse file whose header is SOURCE's, claiming one
			// tensor that covers the rest.
			"sparse": func(ts *testscript.TestScript, neg bool, args []string) {
				size, err := strconv.ParseInt(args[1], 10, 64)
				ts.Check(err)
				header := []byte(`{"big":{"dtype":"U8","shape":[` + strconv.FormatInt(size-8-128, 10) + `],"data_offsets":[0,` + strconv.FormatInt(size-8-128, 10) + `]}}`)
				for len(header) < 128 {
					header = append(header, ' ')
				}
				f, err := os.Create(ts.MkAbs(args[0]))
				ts.Check(err)
				var n [8]byte
				binary.LittleEndian.PutUint64(n[:], 128)
				_, err = f.Write(append(n[:], header...))
				ts.Check(err)
				ts.Check(f.Truncate(size))
				ts.Check(f.Close())
			},
			// corpus NAME AS: copy a real file from the shared corpus into the work folder
			"corpus": func(ts *testscript.TestScript, neg bool, args []string) {
				b, err := os.ReadFile(filepath.Join(corpusDir, args[0]))
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
			},
			// serve [noranges|stall|hub DIR]: serve the work folder over HTTP on loopback; $URL is its address.
			// stall: a server that sends headers and then nothing; `waitrequest` waits for its first request.
			// hub DIR: a fake Hugging Face Hub (package hubtest) of DIR/ORG/REPO/REVISION/….
			"serve": func(ts *testscript.TestScript, neg bool, args []string) {
				h := http.FileServer(http.Dir(ts.Getenv("WORK")))
				if len(args) > 1 && args[0] == "hub" {
					h = &hubtest.Hub{Root: ts.MkAbs(args[1])}
				}
				asked := make(chan struct{})
				if len(args) > 0 && args[0] == "stall" {
					h = stall(asked)
				}
				if len(args) > 0 && args[0] == "noranges" {
					files := h
					h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						r.Header.Del("Range")
						files.ServeHTTP(w, r)
					})
				}
				srv := httptest.NewServer(h)
				ts.Defer(srv.Close)
				ts.Setenv("URL", srv.URL)
				stalled.Store(srv.URL, asked)
			},
			// waitrequest: wait until the `serve stall` server has had a request
			"waitrequest": func(ts *testscript.TestScript, neg bool, args []string) {
				asked, ok := stalled.Load(ts.Getenv("URL"))
				if !ok {
					ts.Fatalf("no `serve stall` server")
				}
				select {
				case <-asked.(chan struct{}):
				case <-time.After(20 * time.Second):
					ts.Fatalf("no request came")
				}
			},
			// sub FILE OLD NEW: replace every OLD in FILE with NEW
			"sub": func(ts *testscript.TestScript, neg bool, args []string) {
				b, err := os.ReadFile(ts.MkAbs(args[0]))
				ts.Check(err)
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.ReplaceAll(string(b), args[1], args[2])), 0o644))
			},
			// ggufsplit PREFIX N: weights.gguf split into N files PREFIX-0000K-of-0000N.gguf, as
			// llama-gguf-split splits a model
			"ggufsplit": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				for k, f := range ggufw.Split(ggufw.Weights(false), n) {
					name := fmt.Sprintf("%s-%05d-of-%05d.gguf", args[0], k+1, n)
					ts.Check(os.WriteFile(ts.MkAbs(name), f.Build(), 0o644))
				}
			},
			// dduf [-reorder] [-config] NAME [FOLDER [COMPONENT=SEED…]]: a small diffusers pipeline as a DDUF
			// file (canon/dduf/ddufw), its members in reverse order (-reorder: other bytes, the same
			// pipeline) or with another unet/config.json (-config); and the same pipeline as FOLDER, whose
			// COMPONENT's weights have other values (another seed)
			"dduf": func(ts *testscript.TestScript, neg bool, args []string) {
				ms := ddufw.Pipeline()
				for len(args) > 0 && strings.HasPrefix(args[0], "-") {
					switch args[0] {
					case "-reorder":
						slices.Reverse(ms)
					case "-config":
						for i := range ms {
							if ms[i].Name == "unet/config.json" {
								ms[i].Data = []byte(`{"in_channels": 9}`)
							}
						}
					}
					args = args[1:]
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), ddufw.Write(ms), 0o644))
				if len(args) < 2 {
					return
				}
				ms = ddufw.Pipeline()
				for _, a := range args[2:] {
					comp, seed, _ := strings.Cut(a, "=")
					n, err := strconv.ParseInt(seed, 10, 64)
					ts.Check(err)
					for i := range ms {
						if strings.HasPrefix(ms[i].Name, comp+"/") && strings.HasSuffix(ms[i].Name, ".safetensors") {
							ms[i].Data = ddufw.Weights(comp, n)
						}
					}
				}
				ts.Check(ddufw.WriteFolder(ts.MkAbs(args[1]), ms))
			},
			// chatgguf NAME TEMPLATE: weights.gguf with the file TEMPLATE as its tokenizer.chat_template
			"chatgguf": func(ts *testscript.TestScript, neg bool, args []string) {
				tpl, err := os.ReadFile(ts.MkAbs(args[1]))
				ts.Check(err)
				f := ggufw.Weights(false)
				f.KVs = append(f.KVs, ggufw.KV{Key: "tokenizer.chat_template", Val: ggufw.Str(string(tpl))})
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), f.Build(), 0o644))
			},
			// shardset pytorch|safetensors DIR N: weights.safetensors' tensors as a sharded PyTorch
			// checkpoint in DIR (pytorch_model.bin.index.json and N shards, views among its tensors), or
			// as a safetensors shard set (model.safetensors.index.json and N shards)
			"shardset": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.Atoi(args[2])
				ts.Check(err)
				files := map[string]func(int) map[string][]byte{"pytorch": torchw.ShardedWeights, "safetensors": stfile.ShardedWeights}[args[0]]
				if files == nil {
					ts.Fatalf("shardset: no format %q", args[0])
				}
				ts.Check(os.MkdirAll(ts.MkAbs(args[1]), 0o755))
				for name, b := range files(n) {
					ts.Check(os.WriteFile(filepath.Join(ts.MkAbs(args[1]), name), b, 0o644))
				}
			},
			// cut NAME N: cut the last N bytes off a file (a truncated download)
			"cut": func(ts *testscript.TestScript, neg bool, args []string) {
				n, err := strconv.ParseInt(args[1], 10, 64)
				ts.Check(err)
				fi, err := os.Stat(ts.MkAbs(args[0]))
				ts.Check(err)
				ts.Check(os.Truncate(ts.MkAbs(args[0]), fi.Size()-n))
			},
			// poke NAME OFFSET HEX: write the bytes HEX at OFFSET of a file (from its end when negative)
			"poke": func(ts *testscript.TestScript, neg bool, args []string) {
				off, err := strconv.ParseInt(args[1], 10, 64)
				ts.Check(err)
				b, err := hex.DecodeString(args[2])
				ts.Check(err)
				f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY, 0)
				ts.Check(err)
				if off < 0 {
					fi, err := f.Stat()
					ts.Check(err)
					off += fi.Size()
				}
				_, err = f.WriteAt(b, off)
				ts.Check(err)
				ts.Check(f.Close())
			},
			// chmod0 NAME: make a file unreadable
			"chmod0": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Check(os.Chmod(ts.MkAbs(args[0]), 0))
			},
		},
	})
}
