package snapshot_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stdiff/stdiff/canon/companion"
	"github.com/stdiff/stdiff/canon/snapshot"
)

// TestCompanionsReadBack: a snapshot of a folder model records its companion files; it reads back
// with them (the fast reader and encoding/json alike), and a hand-edited config.json in it breaks its
// digest. A snapshot without them has no "companions" field (as those written before).
func TestCompanionsReadBack(t *testing.T) {
	s, _ := snap(t)
	if b := write(t, s); bytes.Contains(b, []byte(`"companions"`)) {
		t.Fatal("a snapshot of a file model has companions")
	}
	cfg := companion.File{Path: "config.json", Kind: companion.KindJSON}
	companion.Parse(&cfg, []byte(`{"rope_theta": 10000}`))
	s.Companions = []companion.File{cfg}
	s.Seal()
	b := write(t, s)
	r, err := snapshot.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Companions) != 1 || r.Companions[0].Text != `{"rope_theta":10000}` || r.Companions[0].Digest != cfg.Digest {
		t.Errorf("read back %+v", r.Companions)
	}
	edited := bytes.Replace(b, []byte(`{\"rope_theta\":10000}`), []byte(`{\"rope_theta\":500000}`), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("config.json not found in the snapshot")
	}
	var me *snapshot.MismatchError
	if _, err := snapshot.Read(bytes.NewReader(edited)); !errors.As(err, &me) || me.What != "digest" {
		t.Errorf("edited config.json: %v, want a digest mismatch", err)
	}
}
