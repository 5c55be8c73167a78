package hash

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A manifest lists expected hashes, one per line, as `stdiff hash` prints them:
//
//	<kind>:<value>  <path>
//
// kind is st1 or ct1 (structure and content IDs) or an ecosystem hash name (sha256, autov1, autov2,
// autov3, blake3, crc32). Blank lines and lines starting with '#' are ignored. As in coreutils, a path
// holding a backslash, a newline or a carriage return is written with those escaped (\\, \n, \r) and the
// line starts with '\'.

// ManifestEntry is one line of a manifest.
type ManifestEntry struct {
	Kind  string // "st1", "ct1", "sha256", …
	Value string // the hash, without the kind
	Path  string
	Line  int
}

// kinds are the kinds a manifest may hold, in the order stdiff prints them, with their names in messages.
var kinds = []struct{ kind, name string }{
	{"st1", "structure ID"}, {"ct1", "content ID"}, {"sha256", "SHA256"}, {"autov1", "AutoV1"},
	{"autov2", "AutoV2"}, {"autov3", "AutoV3"}, {"blake3", "BLAKE3"}, {"crc32", "CRC32"},
}

// Kinds a manifest may hold, in the order stdiff prints them.
var Kinds = func() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.kind
	}
	return out
}()

// KindName names a manifest kind in messages: "structure ID" for st1, "SHA256" for sha256 ("" for a
// kind a manifest may not hold).
func KindName(kind string) string {
	for _, k := range kinds {
		if k.kind == kind {
			return k.name
		}
	}
	return ""
}

func knownKind(k string) bool { return KindName(k) != "" }

// FormatLine formats one manifest line (with its newline).
func FormatLine(kind, value, path string) string {
	prefix := ""
	if strings.ContainsAny(path, "\\\n\r") {
		prefix = "\\"
		path = strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "\\r").Replace(path)
	}
	return fmt.Sprintf("%s%s:%s  %s\n", prefix, kind, value, path)
}

// ParseManifest reads a manifest. A line it cannot read is a *ManifestError naming the line.
func ParseManifest(r io.Reader) ([]ManifestEntry, error) {
	var out []ManifestEntry
	n := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		escaped := strings.HasPrefix(line, "\\")
		if escaped {
			line = line[1:]
		}
		id, path, ok := strings.Cut(line, "  ")
		kind, value, ok2 := strings.Cut(id, ":")
		if !ok || !ok2 || path == "" || !knownKind(kind) || value == "" {
			return nil, lineError(n, fmt.Errorf("expected `<kind>:<hash>  <path>` with kind one of %s", strings.Join(Kinds, ", ")))
		}
		if escaped {
			var err error
			if path, err = unescapePath(path); err != nil {
				return nil, lineError(n, err)
			}
		}
		out = append(out, ManifestEntry{Kind: kind, Value: strings.ToLower(value), Path: path, Line: n})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, lineError(n+1, errors.New("line longer than 1 MiB"))
	} else if err != nil {
		return nil, err
	}
	return out, nil
}

// lineError is a manifest line that cannot be read.
func lineError(n int, err error) *ManifestError {
	return &ManifestError{Line: n, Err: err, Hint: "the manifest's lines look like `st1:<hex>  model.safetensors`, as `stdiff hash` prints them"}
}

func unescapePath(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch {
		case i < len(p) && p[i] == '\\':
			b.WriteByte('\\')
		case i < len(p) && p[i] == 'n':
			b.WriteByte('\n')
		case i < len(p) && p[i] == 'r':
			b.WriteByte('\r')
		default:
			return "", fmt.Errorf("bad escape in path %q", p)
		}
	}
	return b.String(), nil
}
