package source

import (
	"errors"
	"strings"
	"testing"
)

func TestHostileIndex(t *testing.T) {
	for _, shard := range []string{"../../etc/passwd", "/etc/passwd", "http://evil.example/x.safetensors", "a/../../b", "x\n.safetensors", `C:\x`, "", "./a"} {
		b := []byte(`{"weight_map": {"t": ` + jsonQuote(shard) + `}}`)
		if _, err := ParseIndex("idx", b); !errors.Is(err, ErrUnsafeShard) {
			t.Errorf("shard %q: %v", shard, err)
		}
	}
	for _, bad := range []string{`[]`, `{}`, `{"weight_map": 3}`, `not json`} {
		if _, err := ParseIndex("idx", []byte(bad)); err == nil {
			t.Errorf("index %s accepted", bad)
		}
	}
	idx, err := ParseIndex("idx", []byte(`{"metadata": {"total_size": 1.5e3}, "weight_map": {"t": "sub/m-00001-of-00001.safetensors"}}`))
	if err != nil || idx.TotalSize != 1500 || idx.Shards[0] != "sub/m-00001-of-00001.safetensors" {
		t.Errorf("index with a subfolder and a float total: %+v %v", idx, err)
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzParseIndex: a sharded-model index from anywhere must never panic, and what it accepts names only
// safe shards.
func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata": {"total_size": 10}, "weight_map": {"a": "m-00001-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map": {"a": "../x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		idx, err := ParseIndex("fuzz", b)
		if err != nil {
			return
		}
		for _, s := range idx.Shards {
			if checkShardName(s) != nil {
				t.Fatalf("unsafe shard %q accepted", s)
			}
		}
	})
}
