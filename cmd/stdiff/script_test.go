package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"stdiff": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

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
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			for name, b := range fixtures() {
				if err := os.WriteFile(filepath.Join(env.WorkDir, name), b, 0o644); err != nil {
					return err
				}
			}
			env.Setenv("NO_COLOR", "1")
			return nil
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
			// chmod0 NAME: make a file unreadable
			"chmod0": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Check(os.Chmod(ts.MkAbs(args[0]), 0))
			},
		},
	})
}
